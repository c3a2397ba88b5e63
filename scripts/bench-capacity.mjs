// Capacity (core/headroom/headroom.ts) at scale: hosts with two NUMA children each (VCPU, PCPU, MEMORY_MB
// on the children, DISK_GB on the root), 20 racks per row... 20 hosts a rack, some usage, and 20
// Nova flavors. Times, in this process, what the daemon's GET /placemat/v1/capacity and a scrape of
// the flavor gauges work out, a what-if without one rack and a flavor mix; then a daemon's answers
// over HTTP (a
// SQLite file loaded with the same cloud, the JSON included), a scrape of its /metrics and N+1
// (every rack lost in turn, its consumers placed again); then the big cloud's first call (its host
// trees built) and the next ones.
//
//   npm run bench -- --capacity [--hosts 10000] [--big 100000] [--rounds 5] [--no-daemon | --daemon-only]
//
// Each line: wall and CPU time (process.cpuUsage: this process's, the HTTP client's included),
// min and p50 over the rounds. On a busy machine the CPU figures are the steadier.
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import {performance} from 'node:perf_hooks'
import {stateFromSnapshot} from '../dist/src/core/snapshot.js'
import {flavorRequest} from '../dist/src/core/headroom/flavors.js'
import {headroom, headroomTable, releaseTable} from '../dist/src/core/headroom/headroom.js'
import {nodeUuid} from '../dist/src/core/topology.js'
import {whatIf} from '../dist/src/core/headroom/what-if.js'
import {lossesOneByOne} from '../dist/src/core/headroom/losses.js'
import {mixHeadroom} from '../dist/src/core/headroom/flavor-mix.js'
import {runBatch} from '../dist/src/core/batch.js'
import {putAllocationErrors, writeAllocations} from '../dist/src/core/placement/allocations.js'
import {Store} from '../dist/src/store/store.js'
import {buildApp} from '../dist/src/http/app.js'
import {FlavorCatalog} from '../dist/src/http/flavor-catalog.js'

const argv = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`)
  return i >= 0 ? Number(argv[i + 1]) : dflt
}
const HOSTS = opt('hosts', 10000)
const BIG = opt('big', 100000)
const ROUNDS = opt('rounds', 5)
const DAEMON = !argv.includes('--no-daemon')
const IN_PROCESS = !argv.includes('--daemon-only')

const inv = (total, extra = {}) => ({total, reserved: 0, min_unit: 1, max_unit: total, step_size: 1, allocation_ratio: 1, ...extra})
const ROOT_INVENTORIES = {DISK_GB: inv(2000)}
const NUMA_INVENTORIES = {VCPU: inv(64, {allocation_ratio: 4}), PCPU: inv(16), MEMORY_MB: inv(262144)}
const uuidOf = (n) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
const rackOf = (h) => Math.floor(h / 20)
const rowOf = (h) => Math.floor(rackOf(h) / 10)
const roomOf = (h) => Math.floor(rowOf(h) / 10)
/** Host h's root and its NUMA children, and what each uses. */
const hostOf = (h) => ({
  root: uuidOf(3 * h + 1),
  numa: [uuidOf(3 * h + 2), uuidOf(3 * h + 3)],
  disk: (h * 7) % 1000,
  vcpu: (h * 13) % 200,
  memory: (h * 4096) % 200000,
})

/** The racks, rows and rooms host h is the first of (none when it is not the first of its rack). */
function nodesFrom(h) {
  const [rack, row, room] = [rackOf(h), rowOf(h), roomOf(h)]
  if (h % 20 !== 0) return []
  const nodes = []
  if (rack % 10 === 0) {
    if (row % 10 === 0) nodes.push({uuid: nodeUuid('room', `room${room}`), name: `room${room}`, level: 'room', parent: null})
    nodes.push({uuid: nodeUuid('row', `row${row}`), name: `row${row}`, level: 'row', parent: nodeUuid('room', `room${room}`)})
  }
  nodes.push({uuid: nodeUuid('rack', `rack${rack}`), name: `rack${rack}`, level: 'rack', parent: nodeUuid('row', `row${row}`)})
  return nodes
}

function cloud(hosts) {
  const providers = []
  const topology = []
  for (let h = 0; h < hosts; h++) {
    const [rack, row, room] = [rackOf(h), rowOf(h), roomOf(h)]
    topology.push(...nodesFrom(h))
    const {root, numa, disk, vcpu, memory} = hostOf(h)
    const aggregates = [nodeUuid('rack', `rack${rack}`), nodeUuid('row', `row${row}`), nodeUuid('room', `room${room}`)]
    providers.push({
      uuid: root,
      name: `h${h}`,
      generation: 1,
      root_provider_uuid: root,
      inventories: ROOT_INVENTORIES,
      usages: {DISK_GB: disk},
      traits: [],
      aggregates,
    })
    numa.forEach((uuid, k) =>
      providers.push({
        uuid,
        name: `h${h}-numa${k}`,
        generation: 1,
        parent_provider_uuid: root,
        root_provider_uuid: root,
        inventories: NUMA_INVENTORIES,
        usages: {VCPU: vcpu, MEMORY_MB: memory},
        traits: ['HW_NUMA_ROOT'],
        aggregates: [],
      }),
    )
  }
  return stateFromSnapshot({
    classes: ['VCPU', 'PCPU', 'MEMORY_MB', 'DISK_GB'],
    traits: ['HW_NUMA_ROOT', 'MISC_SHARES_VIA_AGGREGATE', 'COMPUTE_STATUS_DISABLED'],
    providers,
    topology,
  })
}

/**
 * The cloud of cloud(), its usage as two consumers a host; with `pools`, hosts keep 200 GB of
 * disk of their own and reach their room's pool of 200,000 GB (each claim takes its own first).
 */
function consumerCloud(hosts, pools) {
  const providers = []
  const topology = []
  const consumers = []
  for (let h = 0; h < hosts; h++) {
    const [rack, row, room] = [rackOf(h), rowOf(h), roomOf(h)]
    topology.push(...nodesFrom(h))
    const roomAggregate = nodeUuid('room', `room${room}`)
    if (pools && h % 2000 === 0)
      providers.push({
        uuid: uuidOf(90_000_000 + room),
        name: `ceph${room}`,
        generation: 1,
        inventories: {DISK_GB: inv(200000)},
        traits: ['MISC_SHARES_VIA_AGGREGATE'],
        aggregates: [roomAggregate],
      })
    const {root, numa} = hostOf(h)
    providers.push({
      uuid: root,
      name: `h${h}`,
      generation: 1,
      inventories: pools ? {DISK_GB: inv(200)} : ROOT_INVENTORIES,
      traits: [],
      aggregates: [nodeUuid('rack', `rack${rack}`), nodeUuid('row', `row${row}`), roomAggregate],
    })
    numa.forEach((uuid, k) =>
      providers.push({
        uuid,
        name: `h${h}-numa${k}`,
        generation: 1,
        parent_provider_uuid: root,
        inventories: NUMA_INVENTORIES,
        traits: ['HW_NUMA_ROOT'],
      }),
    )
    for (const [k, u] of numa.entries())
      consumers.push({
        uuid: uuidOf(10_000_000 + 2 * h + k),
        project_id: 'p',
        user_id: 'u',
        allocations: {[root]: {resources: {DISK_GB: 40}}, [u]: {resources: {VCPU: 4 + (h % 8), MEMORY_MB: 8192}}},
      })
  }
  return stateFromSnapshot({
    classes: ['VCPU', 'PCPU', 'MEMORY_MB', 'DISK_GB'],
    traits: ['HW_NUMA_ROOT', 'MISC_SHARES_VIA_AGGREGATE', 'COMPUTE_STATUS_DISABLED'],
    providers,
    topology,
    consumers,
  })
}

const FLAVORS = Array.from({length: 20}, (_, i) => ({
  name: `f${i}`,
  vcpus: 1 + (i % 8),
  ram: 1024 * (1 + (i % 16)),
  disk: 10 * (1 + (i % 5)),
  ephemeral: 0,
  swap: 0,
  properties: i % 5 === 4 ? {'hw:cpu_policy': 'dedicated'} : {},
}))
const flavors = FLAVORS.map(flavorRequest)
/** The headroom's columns, given back once counted, as the daemon does once it has sent them. */
const count = (st, opts) => releaseTable(headroomTable(st, flavors, opts))

const ms = (x) => x.toFixed(0).padStart(6)
const p50 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const min = (xs) => Math.min(...xs)
function report(label, wall, cpu, extra = '') {
  const few = wall.length > 1
  console.log(
    `${label.padEnd(56)} wall ${few ? `min ${ms(min(wall))} p50 ${ms(p50(wall))}` : ms(wall[0])} ms   cpu ${few ? `min ${ms(min(cpu))} p50 ${ms(p50(cpu))}` : ms(cpu[0])} ms${extra}`,
  )
}
/** Wall and CPU time of `fn` (awaited), `rounds` times. */
async function time(label, rounds, fn) {
  const wall = []
  const cpu = []
  let out
  for (let r = 0; r < rounds; r++) {
    const c0 = process.cpuUsage()
    const t0 = performance.now()
    out = await fn()
    wall.push(performance.now() - t0)
    const c = process.cpuUsage(c0)
    cpu.push((c.user + c.system) / 1000)
  }
  report(label, wall, cpu, typeof out === 'number' ? `   ${(out / 1e6).toFixed(1)} MB` : '')
  return out
}

console.log(`capacity: ${HOSTS} hosts with 2 NUMA children, ${flavors.length} flavors, ${ROUNDS} rounds (after one not counted)`)
if (IN_PROCESS) {
  const s = cloud(HOSTS)
  console.log('in process:')
  const every = () => count(s)
  const scrape = () => count(s, {levels: ['rack', 'row', 'room', 'cloud']})
  every()
  await time(`  ${HOSTS} hosts, every level (the daemon's answer, as columns)`, ROUNDS, every)
  await time(`  ${HOSTS} hosts, every level, as rows (the command line's)`, ROUNDS, () => headroom(s, flavors))
  await time(`  ${HOSTS} hosts, racks, rows, rooms and cloud (a scrape)`, ROUNDS, scrape)
  await time(`  ${HOSTS} hosts, what-if without rack0, every level`, ROUNDS, () =>
    count(whatIf(s, {without: [{level: 'rack', name: 'rack0'}]}).after),
  )
  const mix = [0, 5, 9].map((f, k) => ({flavor: flavors[f], weight: [60, 30, 10][k]}))
  await time(`  ${HOSTS} hosts, a mix of three flavors (60/30/10), every level`, ROUNDS, () => {
    mixHeadroom(s, mix)
  })
}

if (IN_PROCESS) {
  // N+1 on clouds whose usage is consumers (two a host), with and without a pool per room.
  for (const pools of [false, true]) {
    const st = consumerCloud(HOSTS, pools)
    const racks = Math.ceil(HOSTS / 20)
    await time(
      `  without each rack (${racks} losses, ${st.consumers.size} consumers placed again${pools ? ', a pool per room' : ''})`,
      1,
      () => {
        let n = 0
        for (const _ of lossesOneByOne(st, 'rack', flavors)) n++
        if (n !== racks) throw new Error(`${n} losses`)
      },
    )
  }
}

if (DAEMON) await daemon(HOSTS)

if (BIG && IN_PROCESS) {
  const big = cloud(BIG)
  console.log(`${BIG} hosts:`)
  await time(`  ${BIG} hosts, every level, first call (host trees built)`, 1, () => count(big))
  await time(`  ${BIG} hosts, every level, again`, Math.min(ROUNDS, 3), () => count(big))
  await time(`  ${BIG} hosts, every level, as rows`, 1, () => headroom(big, flavors))
  await time(`  ${BIG} hosts, racks, rows, rooms and cloud (a scrape)`, Math.min(ROUNDS, 3), () =>
    count(big, {levels: ['rack', 'row', 'room', 'cloud']}),
  )
}

/** A daemon on a SQLite file holding the same cloud (usage as consumers), asked over HTTP. */
async function daemon(hosts) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-bench-capacity-'))
  const flavorFile = path.join(dir, 'flavors.json')
  fs.writeFileSync(flavorFile, JSON.stringify(FLAVORS))
  const catalog = new FlavorCatalog(flavorFile)
  catalog.load()
  const store = await Store.open(path.join(dir, 'placemat.db'))
  const t0 = performance.now()
  await store.write((st, now) => runBatch(st, now, operations(hosts)))
  await store.write((st, now) => {
    // Usage as consumers, each allocation within max_unit (64 VCPU a NUMA node).
    const writes = []
    for (let h = 0; h < hosts; h++) {
      const {root, numa, disk, vcpu, memory} = hostOf(h)
      for (let part = 0, left = vcpu; part === 0 || left > 0; part++, left -= 64) {
        const allocations = new Map()
        if (part === 0) allocations.set(root, new Map([['DISK_GB', disk]]))
        for (const u of numa) {
          const amounts = new Map()
          if (left > 0) amounts.set('VCPU', Math.min(64, left))
          if (part === 0) amounts.set('MEMORY_MB', memory)
          if (amounts.size) allocations.set(u, new Map([...amounts].filter(([, n]) => n > 0)))
        }
        for (const [u, a] of allocations) if (a.size === 0) allocations.delete(u)
        if (allocations.size) writes.push({uuid: uuidOf(10_000_000 + 4 * h + part), allocations, project: 'p', user: 'u'})
      }
    }
    for (const w of writes) writeAllocations(st, now, [w], {checkGeneration: false, ...putAllocationErrors(w.uuid)})
  })
  const app = await buildApp({store, auth: 'noauth2', flavors: catalog})
  await app.listen({host: '127.0.0.1', port: 0})
  const {port} = app.server.address()
  console.log(
    `daemon (SQLite, ${hosts} hosts loaded in ${((performance.now() - t0) / 1000).toFixed(1)} s; HTTP on loopback, whole body read):`,
  )
  const get = (url) =>
    new Promise((resolve, reject) => {
      http
        .get(
          {host: '127.0.0.1', port, path: url, headers: {'x-auth-token': 'admin', 'openstack-api-version': 'placement latest'}},
          (res) => {
            let bytes = 0
            res.on('data', (c) => (bytes += c.length))
            res.on('end', () => (res.statusCode === 200 ? resolve(bytes) : reject(new Error(`${url}: ${res.statusCode}`))))
          },
        )
        .on('error', reject)
    })
  try {
    const st = await store.refresh()
    await time(`  what-if without rack0 on its State (${st.consumers.size} consumers), every level`, ROUNDS, () =>
      count(whatIf(st, {without: [{level: 'rack', name: 'rack0'}]}).after),
    )
    const racks = Math.ceil(hosts / 20)
    await time(`  without each rack (${racks} losses, ${st.consumers.size} consumers placed again)`, 1, () => {
      let n = 0
      for (const _ of lossesOneByOne(st, 'rack', flavors)) n++
      return n === racks ? undefined : Promise.reject(new Error(`${n} losses`))
    })
    await time('  GET /placemat/v1/capacity, first (host trees built)', 1, () => get('/placemat/v1/capacity'))
    await time('  GET /placemat/v1/capacity (every level)', ROUNDS, () => get('/placemat/v1/capacity'))
    await time('  GET /placemat/v1/capacity?level=rack,row,room,cloud', ROUNDS, () =>
      get('/placemat/v1/capacity?level=rack,row,room,cloud'),
    )
    await time('  GET /metrics (the flavor gauges among them)', ROUNDS, () => get('/metrics'))
  } finally {
    await app.close()
    await store.close()
    fs.rmSync(dir, {recursive: true, force: true})
  }
}

/** The batch that makes the cloud: providers, inventories, traits, then the layout. */
function* operations(hosts) {
  const rooms = new Map()
  for (let h = 0; h < hosts; h++) {
    const {root, numa} = hostOf(h)
    yield {op: 'create_provider', uuid: root, name: `h${h}`}
    yield {op: 'set_inventories', uuid: root, inventories: ROOT_INVENTORIES}
    for (const [k, uuid] of numa.entries()) {
      yield {op: 'create_provider', uuid, name: `h${h}-numa${k}`, parent_provider_uuid: root}
      yield {op: 'set_inventories', uuid, inventories: NUMA_INVENTORIES}
      yield {op: 'set_traits', uuid, traits: ['HW_NUMA_ROOT']}
    }
    const room = `room${roomOf(h)}`
    const row = `row${rowOf(h)}`
    const rack = `rack${rackOf(h)}`
    if (!rooms.has(room)) rooms.set(room, new Map())
    const rows = rooms.get(room)
    if (!rows.has(row)) rows.set(row, new Map())
    const racks = rows.get(row)
    if (!racks.has(rack)) racks.set(rack, [])
    racks.get(rack).push(`h${h}`)
  }
  const layout = {
    rooms: [...rooms].map(([name, rows]) => ({
      name,
      rows: [...rows].map(([name, racks]) => ({name, racks: [...racks].map(([name, hosts]) => ({name, hosts}))})),
    })),
  }
  yield {op: 'apply_layout', layout}
}
