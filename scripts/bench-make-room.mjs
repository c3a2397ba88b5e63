// Make room (core/make-room) at scale: hosts with two NUMA children each (VCPU and MEMORY_MB on the
// children, DISK_GB on the root and a room's shared pool), 20 hosts a rack, 10 racks a row, 10 rows a
// room, 1% of them disabled, 20 consumers a host of six flavors (a third of them with their disk on
// the room's pool), and placement groups: anti-affinity by host and by rack (hard), spread over racks
// (soft). Times planMakeRoom for K more of a large flavor in one rack (the plan found, replayed on a
// copy of the cloud and counted again as capacity counts), and prints its moves beside the lower
// bound, and which method gave it; then a rack drained and hosts freed in a row.
//
//   npm run bench -- --make-room [--hosts 1000,10000] [--count 50] [--rounds 3]
//
// Each line: wall and CPU time (process.cpuUsage), min and p50 over the rounds.
import {performance} from 'node:perf_hooks'
import {stateFromSnapshot} from '../dist/src/core/snapshot.js'
import {flavorRequest} from '../dist/src/core/headroom/flavors.js'
import {nodeUuid} from '../dist/src/core/topology.js'
import {planDrainDomain, planFreeHosts, planMakeRoom} from '../dist/src/core/make-room/plan.js'

const argv = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`)
  return i >= 0 ? argv[i + 1] : dflt
}
const SIZES = opt('hosts', '1000,10000').split(',').map(Number)
const COUNT = Number(opt('count', 50))
const ROUNDS = Number(opt('rounds', 3))

const inv = (total, extra = {}) => ({total, reserved: 0, min_unit: 1, max_unit: total, step_size: 1, allocation_ratio: 1, ...extra})
const uuidOf = (kind, n) => `${kind}-0000-4000-8000-${String(n).padStart(12, '0')}`
const rackOf = (h) => Math.floor(h / 20)
const rowOf = (h) => Math.floor(rackOf(h) / 10)
const roomOf = (h) => Math.floor(rowOf(h) / 10)
const NUMA = {VCPU: inv(32, {allocation_ratio: 4}), MEMORY_MB: inv(262144, {reserved: 4096})}
const ROOT = {DISK_GB: inv(1600)}
/** The consumers' flavors: VCPU, MEMORY_MB and DISK_GB an instance, and how often (of 20). */
const MIX = [
  [2, 4096, 20, 5],
  [4, 8192, 40, 5],
  [4, 16384, 40, 3],
  [8, 32768, 80, 3],
  [8, 65536, 80, 2],
  [16, 49152, 160, 2],
]
const LARGE = {name: 'x1.large', vcpus: 16, ram: 98304, disk: 160, ephemeral: 0, swap: 0, properties: {}}

/** A seeded generator (mulberry32): the same cloud every run. */
function rng(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function cloud(hosts) {
  const r = rng(hosts)
  const providers = []
  const topology = []
  const consumers = []
  const byHost = []
  for (let h = 0; h < hosts; h++) {
    const [rack, row, room] = [rackOf(h), rowOf(h), roomOf(h)]
    if (h % 20 === 0) {
      if (rack % 10 === 0) {
        if (row % 10 === 0) {
          topology.push({uuid: nodeUuid('room', `room${room}`), name: `room${room}`, level: 'room', parent: null})
          providers.push({
            uuid: uuidOf('99999999', room),
            name: `ceph${room}`,
            generation: 1,
            inventories: {DISK_GB: inv(2_000_000)},
            traits: ['MISC_SHARES_VIA_AGGREGATE'],
            aggregates: [nodeUuid('room', `room${room}`)],
          })
        }
        topology.push({uuid: nodeUuid('row', `row${row}`), name: `row${row}`, level: 'row', parent: nodeUuid('room', `room${room}`)})
      }
      topology.push({uuid: nodeUuid('rack', `rack${rack}`), name: `rack${rack}`, level: 'rack', parent: nodeUuid('row', `row${row}`)})
    }
    const root = uuidOf('aaaaaaaa', h)
    const numa = [uuidOf('bbbbbbbb', 2 * h), uuidOf('bbbbbbbb', 2 * h + 1)]
    providers.push({
      uuid: root,
      name: `h${String(h).padStart(5, '0')}`,
      generation: 1,
      inventories: ROOT,
      traits: h % 100 === 37 ? ['COMPUTE_STATUS_DISABLED'] : [],
      aggregates: [nodeUuid('rack', `rack${rack}`), nodeUuid('row', `row${row}`), nodeUuid('room', `room${room}`)],
    })
    numa.forEach((uuid, k) =>
      providers.push({uuid, name: `h${h}-numa${k}`, generation: 1, parent_provider_uuid: root, inventories: NUMA, traits: ['HW_NUMA_ROOT']}),
    )
    // 20 consumers: each on the NUMA node with the more memory free, its disk local or (a third) on the pool.
    const free = [
      [128, 258048],
      [128, 258048],
    ]
    let disk = 1600
    const mine = []
    for (let k = 0; k < 20; k++) {
      let x = r() * 20
      let f = MIX[0]
      for (const m of MIX) if ((x -= m[3]) < 0) [f, x] = [m, Infinity]
      const node = free[0][1] >= free[1][1] ? 0 : 1
      if (free[node][0] < f[0] || free[node][1] < f[1]) f = MIX[0]
      free[node][0] -= f[0]
      free[node][1] -= f[1]
      const pooled = r() < 0.33 || disk < f[2]
      if (!pooled) disk -= f[2]
      const c = uuidOf('cccccccc', 20 * h + k)
      consumers.push({
        uuid: c,
        project_id: 'p',
        user_id: 'u',
        allocations: {
          [numa[node]]: {resources: {VCPU: f[0], MEMORY_MB: f[1]}},
          [pooled ? uuidOf('99999999', room) : root]: {resources: {DISK_GB: f[2]}},
        },
      })
      mine.push(c)
    }
    byHost.push(mine)
  }
  const s = stateFromSnapshot({
    classes: ['VCPU', 'MEMORY_MB', 'DISK_GB'],
    traits: ['HW_NUMA_ROOT', 'MISC_SHARES_VIA_AGGREGATE', 'COMPUTE_STATUS_DISABLED'],
    providers,
    topology,
    consumers,
  })
  // Groups: anti-affinity by host (4 members on 4 hosts side by side) and by rack (3 members 3 racks apart),
  // hard; spread over racks (soft), 6 members in 6 racks.
  const group = (name, policy, level, members, extra = {}) =>
    s.groups.set(name, {name, policy, level, soft: false, members: new Set(members), generation: 1, createdAt: 0, updatedAt: 0, ...extra})
  for (let h = 0; h + 4 <= hosts; h += 8) group(`aa-host-${h}`, 'anti-affinity', 'host', [0, 1, 2, 3].map((d) => byHost[h + d][5]))
  for (let h = 0; h + 60 < hosts; h += 40) group(`aa-rack-${h}`, 'anti-affinity', 'rack', [0, 20, 40].map((d) => byHost[h + d][7]))
  for (let h = 0; h + 120 < hosts; h += 200) group(`spread-${h}`, 'spread', 'rack', [0, 20, 40, 60, 80, 100].map((d) => byHost[h + d][9]), {soft: true, maxSkew: 1})
  return {s, consumers: consumers.length}
}

const ms = (x) => x.toFixed(0).padStart(6)
const p50 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
function time(rounds, fn) {
  const wall = []
  const cpu = []
  let out
  for (let k = 0; k < rounds; k++) {
    const c0 = process.cpuUsage()
    const t0 = performance.now()
    out = fn()
    wall.push(performance.now() - t0)
    const c = process.cpuUsage(c0)
    cpu.push((c.user + c.system) / 1000)
  }
  return {out, wall, cpu}
}
function report(label, {out, wall, cpu}) {
  const few = wall.length > 1
  const times = few ? `wall min ${ms(Math.min(...wall))} p50 ${ms(p50(wall))} ms  cpu p50 ${ms(p50(cpu))} ms` : `wall ${ms(wall[0])} ms  cpu ${ms(cpu[0])} ms`
  const bound = out.lowerBound === out.moves.length ? 'the fewest' : `at least ${out.lowerBound} needed`
  const proof = out.proof ? `, proved by the ${out.proof}` : ''
  const what = out.possible ? `${out.moves.length} moves (${bound}; ${out.method}${proof})` : `impossible: ${out.why}`
  console.log(`${label.padEnd(44)} ${times}   ${out.fitBefore} -> ${out.fitAfter}: ${what}`)
}

const flavor = flavorRequest(LARGE)
for (const hosts of SIZES) {
  const t0 = performance.now()
  const {s, consumers} = cloud(hosts)
  console.log(`\n${hosts} hosts (2 NUMA children each), ${consumers} consumers, ${s.groups.size} placement groups (made in ${ms(performance.now() - t0)} ms)`)
  const rack = {level: 'rack', name: `rack${Math.floor(hosts / 20 / 2)}`}
  report(`make-room K=${COUNT} x1.large in ${rack.name}`, time(ROUNDS, () => planMakeRoom(s, {flavor, count: COUNT, domain: rack})))
  report(`drain ${rack.name}`, time(ROUNDS, () => planDrainDomain(s, rack)))
  report('make-room --free-hosts 5 in row0', time(ROUNDS, () => planFreeHosts(s, {count: 5, domain: {level: 'row', name: 'row0'}})))
}
