// Make room (core/make-room) at scale: hosts with two NUMA children each (VCPU and MEMORY_MB on the
// children, DISK_GB on the root and a room's shared pool), 20 hosts a rack, 10 racks a row, 10 rows a
// room, 1% of them disabled, 20 consumers a host of six flavors (a third of them with their disk on
// the room's pool), and placement groups: anti-affinity by host and by rack (hard), spread over racks
// (soft). Times planMakeRoom for K more of a large flavor in one rack (the plan found, replayed on a
// copy of the cloud and counted again as capacity counts), and prints its moves beside the lower
// bound, and which method gave it; then K more in the whole cloud, a rack drained and hosts freed
// in a row. `npm run bench` runs it with the daemon's young generation (DAEMON_NODE_OPTIONS).
//
//   npm run bench -- --make-room [--hosts 1000,10000] [--count 50] [--rounds 3]
//   npm run bench -- --make-room --search     # instead: how far the exact search reaches on small clouds
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
let PER_RACK = 20
const rackOf = (h) => Math.floor(h / PER_RACK)
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

/** The cloud: `hosts` hosts, `perRack` a rack, `perHost` consumers a host. */
function cloud(hosts, perRack = 20, perHost = 20) {
  PER_RACK = perRack
  const r = rng(hosts * 1000 + perHost)
  const providers = []
  const topology = []
  const consumers = []
  const byHost = []
  for (let h = 0; h < hosts; h++) {
    const [rack, row, room] = [rackOf(h), rowOf(h), roomOf(h)]
    if (h % perRack === 0) {
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
      providers.push({
        uuid,
        name: `h${h}-numa${k}`,
        generation: 1,
        parent_provider_uuid: root,
        inventories: NUMA,
        traits: ['HW_NUMA_ROOT'],
      }),
    )
    // 20 consumers: each on the NUMA node with the more memory free, its disk local or (a third) on the pool.
    const free = [
      [128, 258048],
      [128, 258048],
    ]
    let disk = 1600
    const mine = []
    for (let k = 0; k < perHost; k++) {
      let x = r() * 20
      let f = MIX[0]
      for (const m of MIX) if ((x -= m[3]) < 0) [f, x] = [m, Infinity]
      const node = free[0][1] >= free[1][1] ? 0 : 1
      if (free[node][0] < f[0] || free[node][1] < f[1]) f = MIX[0]
      free[node][0] -= f[0]
      free[node][1] -= f[1]
      const pooled = r() < 0.33 || disk < f[2]
      if (!pooled) disk -= f[2]
      const c = uuidOf('cccccccc', perHost * h + k)
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
  const nth = (h, k) => byHost[h][k % perHost]
  for (let h = 0; h + 4 <= hosts; h += 8)
    group(
      `aa-host-${h}`,
      'anti-affinity',
      'host',
      [0, 1, 2, 3].map((d) => nth(h + d, 5)),
    )
  const R = perRack
  for (let h = 0; h + 3 * R <= hosts; h += 2 * R)
    group(
      `aa-rack-${h}`,
      'anti-affinity',
      'rack',
      [0, R, 2 * R].map((d) => nth(h + d, 7)),
    )
  for (let h = 0; h + 6 * R <= hosts; h += 10 * R)
    group(
      `spread-${h}`,
      'spread',
      'rack',
      [0, 1, 2, 3, 4, 5].map((d) => nth(h + d * R, 9)),
      {soft: true, maxSkew: 1},
    )
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
  const times = few
    ? `wall min ${ms(Math.min(...wall))} p50 ${ms(p50(wall))} ms  cpu p50 ${ms(p50(cpu))} ms`
    : `wall ${ms(wall[0])} ms  cpu ${ms(cpu[0])} ms`
  const bound = out.lowerBound === out.moves.length ? 'the fewest' : `at least ${out.lowerBound} needed`
  const proof = out.proof ? `, proved by the ${out.proof}` : ''
  const what = out.possible ? `${out.moves.length} moves (${bound}; ${out.method}${proof})` : `impossible: ${out.why}`
  console.log(`${label.padEnd(44)} ${times}   ${out.fitBefore} -> ${out.fitAfter}: ${what}`)
}

/**
 * A small cloud for the exact search: `hosts` hosts, 2 a rack (flat: 8 to 16 VCPU, 16 to 32 GB and
 * local disk; or two NUMA nodes of half that and disk on the root), filled with consumers of 1 to 4
 * VCPU and 1 to 8 GB until about 75% of the memory is used, an anti-affinity group by host of 3.
 */
function small(hosts, seed) {
  const r = rng(seed)
  const int = (lo, hi) => lo + Math.floor(r() * (hi - lo + 1))
  const providers = []
  const topology = [{uuid: nodeUuid('room', 'room0'), name: 'room0', level: 'room', parent: null}]
  topology.push({uuid: nodeUuid('row', 'row0'), name: 'row0', level: 'row', parent: topology[0].uuid})
  const slots = []
  for (let h = 0; h < hosts; h++) {
    const rack = `rack${h >> 1}`
    if (h % 2 === 0) topology.push({uuid: nodeUuid('rack', rack), name: rack, level: 'rack', parent: topology[1].uuid})
    const root = uuidOf('aaaaaaaa', h)
    const aggregates = [nodeUuid('rack', rack), topology[1].uuid, topology[0].uuid]
    const [cpu, mem] = [int(8, 16), int(16, 32) * 1024]
    if (r() < 0.5) {
      providers.push({
        uuid: root,
        name: `s${h}`,
        generation: 1,
        inventories: {VCPU: inv(cpu), MEMORY_MB: inv(mem), DISK_GB: inv(400)},
        aggregates,
      })
      slots.push({root, nodes: [[root, cpu, mem]]})
    } else {
      providers.push({uuid: root, name: `s${h}`, generation: 1, inventories: {DISK_GB: inv(400)}, aggregates})
      const nodes = [0, 1].map((k) => [uuidOf('bbbbbbbb', 2 * h + k), cpu >> 1, mem >> 1])
      for (const [uuid, c, m] of nodes)
        providers.push({
          uuid,
          name: `s${h}-numa${uuid.slice(-1)}`,
          generation: 1,
          parent_provider_uuid: root,
          inventories: {VCPU: inv(c), MEMORY_MB: inv(m)},
        })
      slots.push({root, nodes})
    }
  }
  const consumers = []
  const total = slots.reduce((a, x) => a + x.nodes.reduce((b, n) => b + n[2], 0), 0)
  let used = 0
  for (let tries = 0; used < 0.75 * total && tries < 40 * hosts; tries++) {
    const slot = slots[int(0, hosts - 1)]
    const node = slot.nodes[int(0, slot.nodes.length - 1)]
    const [c, m] = [int(1, 4), int(1, 8) * 1024]
    if (node[1] < c || node[2] < m) continue
    node[1] -= c
    node[2] -= m
    used += m
    const allocations =
      node[0] === slot.root
        ? {[slot.root]: {resources: {VCPU: c, MEMORY_MB: m, DISK_GB: 20}}}
        : {[node[0]]: {resources: {VCPU: c, MEMORY_MB: m}}, [slot.root]: {resources: {DISK_GB: 20}}}
    consumers.push({uuid: uuidOf('cccccccc', consumers.length), project_id: 'p', user_id: 'u', allocations})
  }
  const st = stateFromSnapshot({
    classes: ['VCPU', 'MEMORY_MB', 'DISK_GB'],
    traits: ['COMPUTE_STATUS_DISABLED'],
    providers,
    topology,
    consumers,
  })
  const members = [0, 1, 2].map((k) => consumers[Math.floor((k * consumers.length) / 3)].uuid)
  st.groups.set('aa', {
    name: 'aa',
    policy: 'anti-affinity',
    level: 'host',
    soft: false,
    members: new Set(members),
    generation: 1,
    createdAt: 0,
    updatedAt: 0,
  })
  return st
}

/** The exact search on small clouds, forced where the heuristic's plan does not meet the bound: how often it finishes in its budget, how long it takes. */
function searchReach() {
  const flavor = flavorRequest({name: 'm1.large', vcpus: 4, ram: 8192, disk: 20, ephemeral: 0, swap: 0, properties: {}})
  console.log(
    '\nthe exact search (default budget: 10,000 states) on small clouds, 2 hosts a rack, K = now + 1 to 3 of m1.large in rack0, 20 clouds a size',
  )
  for (const hosts of [4, 6, 8, 12, 16, 24]) {
    const tally = new Map()
    const count = (k) => tally.set(k, (tally.get(k) ?? 0) + 1)
    let consumers = 0
    const gaps = []
    const times = []
    for (let seed = 1; seed <= 20; seed++) {
      const st = small(hosts, hosts * 100 + seed)
      consumers += st.consumers.size
      const domain = {level: 'rack', name: 'rack0'}
      const now = planMakeRoom(st, {flavor, count: 0, domain}).fitBefore
      const t0 = performance.now()
      const p = planMakeRoom(st, {flavor, count: now + 1 + (seed % 3), domain, searchSize: Infinity})
      times.push(performance.now() - t0)
      if (!p.search) count(p.possible ? 'planned, the fewest by the bound' : 'impossible by the bound')
      else if (p.search.complete)
        count(
          p.possible
            ? p.method === 'exact'
              ? 'the search found the fewest'
              : "the search proved the heuristic's the fewest"
            : 'the search proved none',
        )
      else if (p.possible) {
        count('the search ran out, a plan')
        gaps.push(`${p.moves.length} moves, at least ${p.lowerBound}`)
      } else count('the search ran out, no plan')
    }
    const order = [
      'impossible by the bound',
      'planned, the fewest by the bound',
      "the search proved the heuristic's the fewest",
      'the search found the fewest',
      'the search proved none',
      'the search ran out, a plan',
      'the search ran out, no plan',
    ]
    const said = order
      .filter((k) => tally.has(k))
      .map((k) => `${tally.get(k)} ${k}`)
      .join(', ')
    console.log(
      `${String(hosts).padStart(3)} hosts, ${(consumers / 20).toFixed(0).padStart(3)} consumers: ${said}${gaps.length ? ` (${gaps.join('; ')})` : ''}; p50 ${ms(p50(times))} ms, max ${ms(Math.max(...times))} ms`,
    )
  }
}

const flavor = flavorRequest(LARGE)
if (argv.includes('--search')) searchReach()
for (const hosts of argv.includes('--search') ? [] : SIZES) {
  const t0 = performance.now()
  const {s, consumers} = cloud(hosts)
  console.log(
    `\n${hosts} hosts (2 NUMA children each), ${consumers} consumers, ${s.groups.size} placement groups (made in ${ms(performance.now() - t0)} ms)`,
  )
  const rack = {level: 'rack', name: `rack${Math.floor(hosts / 20 / 2)}`}
  const room = (count, domain) => () => planMakeRoom(s, {flavor, count, domain})
  report(`make-room K=${COUNT} x1.large in ${rack.name}`, time(ROUNDS, room(COUNT, rack)))
  const now = planMakeRoom(s, {flavor, count: 0}).fitBefore
  report(`make-room K=now+${COUNT} x1.large, the cloud`, time(ROUNDS, room(now + COUNT)))
  report(
    `drain ${rack.name}`,
    time(ROUNDS, () => planDrainDomain(s, rack)),
  )
  const row0 = {level: 'row', name: 'row0'}
  report(
    'make-room --free-hosts 5 in row0',
    time(ROUNDS, () => planFreeHosts(s, {count: 5, domain: row0})),
  )
}
