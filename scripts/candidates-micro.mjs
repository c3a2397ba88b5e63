#!/usr/bin/env node
// Micro-benchmark of the allocation-candidates engine (src/core/candidates), in-process.
// Bundles the TypeScript sources with esbuild into a temp file, builds States like
// ../shared/perf/load.mjs does (flat placeload providers, nested compute trees) and times
// parse + search (+ render) per query: warm, after a write (state.version bumped) and after a
// structural change (index rebuilt). Medians in ms. Usage: node scripts/candidates-micro.mjs [--runs 30]
import {build} from 'esbuild'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const runs = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 30
const out = path.join(os.tmpdir(), `placemat-candidates-${process.pid}.mjs`)
await build({
  stdin: {
    contents: `
      export * from './src/core/candidates/engine.ts'
      export * from './src/core/candidates/request.ts'
      export * from './src/core/candidates/render.ts'
      export * from './src/core/state/state.ts'
      export * from './src/core/state/changes.ts'
      export * from './src/core/standard.ts'`,
    resolveDir: root,
    loader: 'ts',
  },
  bundle: true,
  format: 'esm',
  platform: 'node',
  outfile: out,
  logLevel: 'error',
})
const M = await import(pathToFileURL(out).href)
fs.rmSync(out)

let seq = 0
const uuid = () => `00000000-0000-4000-8000-${(++seq).toString(16).padStart(12, '0')}`
const AGGS = ['14a5c8a3-5a99-4e8f-88be-00d85fcb1c17', '66d98e7c-0b4f-4b8e-9c5e-8d6c2a4f7e11', 'a59dbb28-4b3c-4a8e-9f1b-2c3d4e5f6a7b']
const TRAITS = ['HW_CPU_X86_AVX2', 'HW_CPU_X86_SSE2', 'STORAGE_DISK_SSD']

function world() {
  const s = new M.State()
  s.changes = new M.Changes()
  M.STANDARD_RESOURCE_CLASSES.forEach((rc, id) => s.addClass(rc, 0, id))
  for (const t of M.STANDARD_TRAITS) s.addTrait(t, 0)
  s.addTrait('CUSTOM_FOO', 0)
  s.addTrait('CUSTOM_PHYSNET_PHYSNET0', 0)
  s.addTrait('CUSTOM_VNIC_TYPE_DIRECT', 0)
  return s
}
const inv = (total, o = {}) => ({total, reserved: 0, min_unit: 1, max_unit: total, step_size: 1, allocation_ratio: 1, ...o})

function flat(n) {
  const s = world()
  for (let i = 0; i < n; i++) {
    const p = M.newProvider(uuid(), `cn${i}`, null, 0)
    s.addProvider(p)
    s.setInventory(p, 'VCPU', inv(32, {max_unit: 16}))
    s.setInventory(p, 'MEMORY_MB', inv(8192, {min_unit: 128}))
    s.setInventory(p, 'DISK_GB', inv(8192, {min_unit: 5}))
    s.setAggregates(p, AGGS.slice(0, 1 + (i % 3)))
    s.setTraits(p, TRAITS.slice(0, 1 + (Math.floor(i / 3) % 3)))
  }
  s.changes = null
  return s
}

function nested(trees) {
  const s = world()
  const add = (name, parent, invs, traits = []) => {
    const p = M.newProvider(uuid(), name, parent, 0)
    s.addProvider(p)
    for (const [rc, v] of Object.entries(invs)) s.setInventory(p, rc, v)
    if (traits.length) s.setTraits(p, traits)
    return p
  }
  for (let t = 0; t < trees; t++) {
    const cn = add(`cn${t}`, null, {DISK_GB: inv(20480)}, ['COMPUTE_VOLUME_MULTI_ATTACH'])
    const n0 = add(`cn${t}-numa0`, cn, {VCPU: inv(4, {reserved: 2}), MEMORY_MB: inv(2048, {min_unit: 512, step_size: 256})}, [
      'HW_NUMA_ROOT',
    ])
    add(`cn${t}-fpga0`, n0, {FPGA: inv(1)})
    add(`cn${t}-vgpu0`, n0, {VGPU: inv(8)})
    const n1 = add(`cn${t}-numa1`, cn, {VCPU: inv(4), MEMORY_MB: inv(2048, {min_unit: 256, max_unit: 1024})}, [
      'HW_NUMA_ROOT',
      'CUSTOM_FOO',
    ])
    add(`cn${t}-fpga1_0`, n1, {FPGA: inv(1)})
    add(`cn${t}-fpga1_1`, n1, {FPGA: inv(1)})
    for (const numa of [n0, n1]) {
      add(
        `${numa.name}-pf`,
        numa,
        {
          SRIOV_NET_VF: inv(8),
          NET_BW_EGR_KILOBIT_PER_SEC: inv(10000000),
          NET_BW_IGR_KILOBIT_PER_SEC: inv(10000000),
        },
        ['CUSTOM_PHYSNET_PHYSNET0', 'CUSTOM_VNIC_TYPE_DIRECT'],
      )
    }
  }
  s.changes = null
  return s
}

function params(q) {
  const m = new Map()
  for (const [k, v] of new URLSearchParams(q)) m.has(k) ? m.get(k).push(v) : m.set(k, [v])
  return m
}

const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]

function bench(label, state, query, {opts = {}, mv = [1, 39]} = {}) {
  const p = params(query)
  const once = (render) => {
    const t0 = performance.now()
    const req = M.parseCandidateRequest(p, mv)
    const res = M.findCandidates(state, req, opts)
    const t1 = performance.now()
    const body = render ? M.renderCandidates(res, mv) : null
    const t2 = performance.now()
    return {search: t1 - t0, render: t2 - t1, res, body}
  }
  for (let i = 0; i < 5; i++) once(true) // warm up the JIT
  // after a write: state.version bumped (usages re-read, structure revalidated)
  const bumped = []
  for (let i = 0; i < Math.min(runs, 10); i++) {
    state.version++
    bumped.push(once(false).search)
  }
  // structure changed: index rebuilt from scratch
  const rebuilt = []
  for (let i = 0; i < Math.min(runs, 5); i++) {
    M.dropIndex(state)
    rebuilt.push(once(false).search)
  }
  const search = []
  const render = []
  let last
  for (let i = 0; i < runs; i++) {
    last = once(true)
    search.push(last.search)
    render.push(last.render)
  }
  const json = JSON.stringify(last.body)
  console.log(
    `${label.padEnd(44)} candidates ${String(last.res.allocationRequests.length).padStart(6)}  summaries ${String(
      last.res.providerSummaries.length,
    ).padStart(
      6,
    )}  search p50 ${median(search).toFixed(2).padStart(7)} (min ${Math.min(...search).toFixed(2)}) ms  +render ${median(render).toFixed(2).padStart(6)} ms  ` +
      `after write ${median(bumped).toFixed(2).padStart(7)} ms  rebuild ${median(rebuilt).toFixed(2).padStart(7)} ms  ` +
      `json ${(json.length / 1024).toFixed(0)} KiB`,
  )
}

const PERFLOAD = 'resources=VCPU:1,DISK_GB:10,MEMORY_MB:256&member_of=14a5c8a3-5a99-4e8f-88be-00d85fcb1c17&required=HW_CPU_X86_AVX2'
const NESTED =
  'resources=DISK_GB:10&required=COMPUTE_VOLUME_MULTI_ATTACH&resources_COMPUTE=VCPU:1,MEMORY_MB:256&required_COMPUTE=CUSTOM_FOO' +
  '&resources_FPGA=FPGA:1&group_policy=none&same_subtree=_COMPUTE,_FPGA'
const NESTED_NET =
  'resources=DISK_GB:10&resources_COMPUTE=VCPU:1,MEMORY_MB:512&resources_NET=SRIOV_NET_VF:1,NET_BW_EGR_KILOBIT_PER_SEC:1000,' +
  'NET_BW_IGR_KILOBIT_PER_SEC:1000&required_NET=CUSTOM_PHYSNET_PHYSNET0&group_policy=isolate&same_subtree=_COMPUTE,_NET'

// make every flat provider match the perfload query, as placeload does
function perfloadFlat(n) {
  const s = flat(n)
  s.changes = new M.Changes()
  for (const p of s.providers.values()) {
    s.setAggregates(p, new Set([AGGS[0], ...p.aggregates]))
    s.setTraits(p, new Set(['HW_CPU_X86_AVX2', ...p.traits]))
  }
  s.changes = null
  return s
}

const f1k = perfloadFlat(1000)
bench('flat 1000, perfload query', f1k, PERFLOAD)
bench('flat 1000, perfload query, limit=5', f1k, PERFLOAD + '&limit=5')
bench('flat 1000, resources only', f1k, 'resources=VCPU:1,DISK_GB:10,MEMORY_MB:256')
const n1k = nested(1000)
bench('nested 1000 trees (9000 rps), candidates-nested', n1k, NESTED)
bench('nested 1000 trees, candidates-nested-net', n1k, NESTED_NET)
bench('nested 1000 trees, unsuffixed VCPU+MEM+VF', n1k, 'resources=VCPU:1,MEMORY_MB:512,SRIOV_NET_VF:1')
bench('nested 1000 trees, nested query limit=5', n1k, NESTED + '&limit=5')
const f100k = perfloadFlat(100000)
bench('flat 100000, perfload query, limit=1000', f100k, PERFLOAD + '&limit=1000')
bench('flat 100000, perfload, limit=1000 random', f100k, PERFLOAD + '&limit=1000', {opts: {randomize: true}})
bench('flat 100000, perfload query (all)', f100k, PERFLOAD)

// explosion: 1 root, 8 children with 1 unit, 8 isolated single-unit groups
const ex = world()
const r = M.newProvider(uuid(), 'root', null, 0)
ex.addProvider(r)
for (let i = 0; i < 8; i++) {
  const c = M.newProvider(uuid(), `c${i}`, r, 0)
  ex.addProvider(c)
  ex.setInventory(c, 'VCPU', inv(1))
}
ex.changes = null
const G8 = Array.from({length: 8}, (_, i) => `resources${i + 1}=VCPU:1`).join('&')
bench('explosion 8x8 isolate limit=1000', ex, G8 + '&group_policy=isolate&limit=1000')
bench('explosion 8x8 isolate (all 40320)', ex, G8 + '&group_policy=isolate')
bench('explosion 9 groups over 8 (unsatisfiable)', ex, G8 + '&resources9=VCPU:1&group_policy=none')
