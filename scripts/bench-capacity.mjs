// Capacity (core/headroom.ts) at scale: hosts with two NUMA children each (VCPU, PCPU, MEMORY_MB
// on the children, DISK_GB on the root), 20 racks per row... 20 hosts a rack, some usage, and 20
// Nova flavors. Times, in this process, what the daemon's GET /placemat/v1/capacity and a scrape of
// the flavor gauges work out, and a what-if without one rack:
//
//   npm run bench -- --capacity [--hosts 10000] [--big 100000] [--rounds 3]
import {performance} from 'node:perf_hooks'
import {stateFromSnapshot} from '../dist/src/core/snapshot.js'
import {flavorRequest} from '../dist/src/core/flavors.js'
import {headroom} from '../dist/src/core/headroom.js'
import {nodeUuid} from '../dist/src/core/topology.js'
import {whatIf} from '../dist/src/core/what-if.js'

const argv = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`)
  return i >= 0 ? Number(argv[i + 1]) : dflt
}
const HOSTS = opt('hosts', 10000)
const BIG = opt('big', 100000)
const ROUNDS = opt('rounds', 3)

function cloud(hosts) {
  const inv = (total, extra = {}) => ({total, reserved: 0, min_unit: 1, max_unit: total, step_size: 1, allocation_ratio: 1, ...extra})
  const providers = []
  const topology = []
  let n = 0
  const uuid = () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`
  for (let h = 0; h < hosts; h++) {
    const rack = Math.floor(h / 20)
    const row = Math.floor(rack / 10)
    const room = Math.floor(row / 10)
    if (h % 20 === 0) {
      if (rack % 10 === 0) {
        if (row % 10 === 0) topology.push({uuid: nodeUuid('room', `room${room}`), name: `room${room}`, level: 'room', parent: null})
        topology.push({uuid: nodeUuid('row', `row${row}`), name: `row${row}`, level: 'row', parent: nodeUuid('room', `room${room}`)})
      }
      topology.push({uuid: nodeUuid('rack', `rack${rack}`), name: `rack${rack}`, level: 'rack', parent: nodeUuid('row', `row${row}`)})
    }
    const root = uuid()
    const aggregates = [nodeUuid('rack', `rack${rack}`), nodeUuid('row', `row${row}`), nodeUuid('room', `room${room}`)]
    providers.push({
      uuid: root,
      name: `h${h}`,
      generation: 1,
      root_provider_uuid: root,
      inventories: {DISK_GB: inv(2000)},
      usages: {DISK_GB: (h * 7) % 1000},
      traits: [],
      aggregates,
    })
    for (let k = 0; k < 2; k++) {
      const usages = {VCPU: (h * 13) % 200, MEMORY_MB: (h * 4096) % 200000}
      providers.push({
        uuid: uuid(),
        name: `h${h}-numa${k}`,
        generation: 1,
        parent_provider_uuid: root,
        root_provider_uuid: root,
        inventories: {VCPU: inv(64, {allocation_ratio: 4}), PCPU: inv(16), MEMORY_MB: inv(262144)},
        usages,
        traits: ['HW_NUMA_ROOT'],
        aggregates: [],
      })
    }
  }
  return stateFromSnapshot({
    classes: ['VCPU', 'PCPU', 'MEMORY_MB', 'DISK_GB'],
    traits: ['HW_NUMA_ROOT', 'MISC_SHARES_VIA_AGGREGATE', 'COMPUTE_STATUS_DISABLED'],
    providers,
    topology,
  })
}

const flavors = Array.from({length: 20}, (_, i) =>
  flavorRequest({
    name: `f${i}`,
    vcpus: 1 + (i % 8),
    ram: 1024 * (1 + (i % 16)),
    disk: 10 * (1 + (i % 5)),
    ephemeral: 0,
    swap: 0,
    properties: i % 5 === 4 ? {'hw:cpu_policy': 'dedicated'} : {},
  }),
)

const p50 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
function time(label, rounds, fn) {
  const ms = []
  let out
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now()
    out = fn()
    ms.push(performance.now() - t0)
  }
  console.log(`${label.padEnd(58)} p50 ${p50(ms).toFixed(0).padStart(6)} ms  (${ms.map((x) => x.toFixed(0)).join(', ')})`)
  return out
}

const s = cloud(HOSTS)
console.log(
  `capacity: ${HOSTS} hosts with 2 NUMA children, ${flavors.length} flavors (in process: what the daemon's answer and a scrape work out)`,
)
time(`${HOSTS} hosts, every level (GET /placemat/v1/capacity)`, ROUNDS, () => headroom(s, flavors))
time(`${HOSTS} hosts, racks, rows, rooms and cloud (a scrape)`, ROUNDS, () =>
  headroom(s, flavors, {levels: ['rack', 'row', 'room', 'cloud']}),
)
time(`${HOSTS} hosts, what-if without rack0, every level`, ROUNDS, () =>
  headroom(whatIf(s, {without: [{level: 'rack', name: 'rack0'}]}).after, flavors),
)
if (BIG) {
  const big = cloud(BIG)
  time(`${BIG} hosts, every level`, 1, () => headroom(big, flavors))
}
