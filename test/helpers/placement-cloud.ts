/**
 * A small cloud with every kind of thing a running Placement holds, made through an API
 * (Placement's or placemat's), and every answer a client reads of it, for comparing two servers:
 * nested trees (compute, NUMA, GPU and NIC children), a sharing storage provider, an ironic
 * node, standard and custom classes and traits, aggregates (one sent in upper case), consumers
 * of every type and an incomplete one (written before 1.8, without project and user).
 */
import {expect} from 'vitest'

export type Call = (method: string, path: string, body?: unknown, version?: string) => Promise<{status: number; body: any}>

const u = (n: number, kind = 'c') => `${kind}0000000-0000-4000-8000-${String(n).padStart(12, '0')}`
export const AGG_RACK = 'aa000000-0000-4000-8000-000000000001'
/** Sent in upper case: Placement on SQLite keeps it so. */
export const AGG_SHARED_UPPER = 'BB000000-0000-4000-8000-0000000000AB'
const PROJECT = 'f0000000-0000-4000-8000-000000000001'
const USER = 'f0000000-0000-4000-8000-000000000002'

async function ok(call: Call, method: string, path: string, body?: unknown, version?: string): Promise<any> {
  const r = await call(method, path, body, version)
  expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBeLessThan(300)
  return r.body
}

export interface CloudIds {
  providers: string[]
  consumers: string[]
}

export async function fillCloud(call: Call): Promise<CloudIds> {
  const providers: string[] = []
  const create = async (uuid: string, name: string, parent?: string) => {
    await ok(call, 'POST', '/resource_providers', {uuid, name, ...(parent ? {parent_provider_uuid: parent} : {})})
    providers.push(uuid)
  }
  const inventory = async (uuid: string, inventories: Record<string, Record<string, number>>) => {
    const gen = (await ok(call, 'GET', `/resource_providers/${uuid}`)).generation
    await ok(call, 'PUT', `/resource_providers/${uuid}/inventories`, {resource_provider_generation: gen, inventories})
  }
  const traits = async (uuid: string, list: string[]) => {
    const gen = (await ok(call, 'GET', `/resource_providers/${uuid}`)).generation
    await ok(call, 'PUT', `/resource_providers/${uuid}/traits`, {resource_provider_generation: gen, traits: list})
  }
  const aggregates = async (uuid: string, list: string[]) => {
    const gen = (await ok(call, 'GET', `/resource_providers/${uuid}`)).generation
    await ok(call, 'PUT', `/resource_providers/${uuid}/aggregates`, {resource_provider_generation: gen, aggregates: list})
  }
  for (const rc of ['CUSTOM_GOLD', 'CUSTOM_BAREMETAL_SMALL']) await ok(call, 'PUT', `/resource_classes/${rc}`)
  for (const t of ['CUSTOM_RACK_A', 'CUSTOM_PHYSNET0', 'CUSTOM_UNUSED']) await ok(call, 'PUT', `/traits/${t}`)

  // Two computes, each with two NUMA nodes; the first with a GPU and a NIC child.
  for (const cn of [1, 2]) {
    const root = u(cn * 10)
    await create(root, `cn${cn}`)
    await inventory(root, {MEMORY_MB: {total: 65536, reserved: 512}, DISK_GB: {total: 100, allocation_ratio: 1.5}})
    await traits(root, ['HW_CPU_X86_AVX2', cn === 2 ? 'COMPUTE_STATUS_DISABLED' : 'HW_CPU_X86_SSE', 'CUSTOM_RACK_A'])
    await aggregates(root, cn === 1 ? [AGG_RACK, AGG_SHARED_UPPER] : [AGG_SHARED_UPPER])
    for (const numa of [1, 2]) {
      const id = u(cn * 10 + numa)
      await create(id, `cn${cn}-numa${numa}`, root)
      await inventory(id, {VCPU: {total: 16, max_unit: 8}, PCPU: {total: 8}, CUSTOM_GOLD: {total: 4, step_size: 2}})
      await traits(id, ['HW_NUMA_ROOT'])
    }
    if (cn === 1) {
      await create(u(15), 'cn1-gpu0', root)
      await inventory(u(15), {VGPU: {total: 4}})
      await create(u(16), 'cn1-nic0', root)
      await inventory(u(16), {NET_BW_EGR_KILOBIT_PER_SEC: {total: 10_000_000}, SRIOV_NET_VF: {total: 8}})
      await traits(u(16), ['CUSTOM_PHYSNET0', 'HW_NIC_SRIOV'])
    }
  }
  // Shared storage and an ironic node.
  await create(u(90), 'shared-storage')
  await inventory(u(90), {DISK_GB: {total: 10_000, reserved: 100}})
  await traits(u(90), ['MISC_SHARES_VIA_AGGREGATE'])
  await aggregates(u(90), [AGG_SHARED_UPPER])
  await create(u(91), 'ironic-node-1')
  await inventory(u(91), {CUSTOM_BAREMETAL_SMALL: {total: 1, max_unit: 1}})

  // Consumers of every type, with and without sharing; one incomplete (1.7: no project, no user).
  const consumers: string[] = []
  const claim = async (n: number, allocations: Record<string, Record<string, number>>, type?: string) => {
    const c = u(n, 'd')
    const body = {
      allocations: Object.fromEntries(Object.entries(allocations).map(([rp, resources]) => [rp, {resources}])),
      project_id: PROJECT,
      user_id: USER,
      consumer_generation: null,
      ...(type ? {consumer_type: type} : {}),
    }
    await ok(call, 'PUT', `/allocations/${c}`, body, type ? '1.38' : '1.28')
    consumers.push(c)
  }
  await claim(1, {[u(10)]: {MEMORY_MB: 2048}, [u(11)]: {VCPU: 4, CUSTOM_GOLD: 2}, [u(90)]: {DISK_GB: 40}}, 'INSTANCE')
  await claim(2, {[u(10)]: {MEMORY_MB: 1024}, [u(12)]: {PCPU: 2}, [u(15)]: {VGPU: 1}, [u(16)]: {SRIOV_NET_VF: 1}}, 'INSTANCE')
  await claim(3, {[u(20)]: {MEMORY_MB: 4096, DISK_GB: 20}, [u(21)]: {VCPU: 2}}, 'MIGRATION')
  await claim(4, {[u(91)]: {CUSTOM_BAREMETAL_SMALL: 1}}) // no type (1.28)
  const incomplete = u(5, 'd')
  await ok(call, 'PUT', `/allocations/${incomplete}`, {allocations: [{resource_provider: {uuid: u(22)}, resources: {VCPU: 1}}]}, '1.7')
  consumers.push(incomplete)
  // A consumer whose allocations were removed and written again (generations move).
  const again = (await ok(call, 'GET', `/allocations/${u(3, 'd')}`, undefined, '1.38')) as any
  await ok(
    call,
    'PUT',
    `/allocations/${u(3, 'd')}`,
    {
      allocations: Object.fromEntries(Object.entries(again.allocations).map(([rp, a]: [string, any]) => [rp, {resources: a.resources}])),
      project_id: PROJECT,
      user_id: USER,
      consumer_generation: again.consumer_generation,
      consumer_type: 'MIGRATION',
    },
    '1.38',
  )
  return {providers, consumers}
}

/** Candidates queries a scheduler sends, at 1.39. */
export const CANDIDATE_QUERIES = [
  'resources=VCPU:1',
  'resources=VCPU:2,MEMORY_MB:1024',
  'resources=VCPU:1,MEMORY_MB:512,DISK_GB:10',
  'resources=DISK_GB:500',
  'resources=PCPU:1&required=HW_NUMA_ROOT',
  'resources=VCPU:1&required=!COMPUTE_STATUS_DISABLED',
  'resources=CUSTOM_GOLD:2',
  'resources=CUSTOM_BAREMETAL_SMALL:1',
  `resources=VCPU:1&member_of=${AGG_RACK}`,
  `resources=DISK_GB:10&member_of=${AGG_SHARED_UPPER.toLowerCase()}`,
  `resources=DISK_GB:10&member_of=${AGG_SHARED_UPPER}`,
  'resources_COMPUTE=VCPU:1&resources_NET=SRIOV_NET_VF:1&required_NET=CUSTOM_PHYSNET0&same_subtree=_COMPUTE,_NET&group_policy=none',
  'resources=VGPU:1&root_required=HW_CPU_X86_AVX2',
  'resources=MEMORY_MB:1024&in_tree=' + u(20),
  // (Not `limit`: which of the candidates a limit keeps follows each server's own order.)
]

/**
 * Lists sorted (the order the two servers list in may differ; what they hold may not), and
 * uuids in lower case (placemat keeps aggregate ids in canonical form where Placement on SQLite
 * keeps them as sent).
 */
export function unordered(v: unknown): unknown {
  if (typeof v === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v)) return v.toLowerCase()
  if (Array.isArray(v)) return v.map(unordered).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1))
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v)
        .map(([k, x]) => [unordered(k) as string, unordered(x)])
        .sort(([a], [b]) => (a < b ? -1 : 1)),
    )
  return v
}

/** Every answer a client reads of the cloud, at 1.39, lists unordered. */
export async function answers(call: Call, ids: CloudIds): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {}
  const read = async (path: string) => {
    const r = await call('GET', path, undefined, '1.39')
    out[path] = {status: r.status, body: unordered(r.body)}
  }
  await read('/resource_providers')
  await read('/resource_classes')
  await read('/traits')
  await read(`/usages?project_id=${PROJECT}`)
  await read(`/usages?project_id=00000000-0000-0000-0000-000000000000`)
  for (const p of ids.providers) {
    for (const part of ['', '/inventories', '/traits', '/aggregates', '/usages', '/allocations'])
      await read(`/resource_providers/${p}${part}`)
  }
  await read(`/resource_providers?member_of=${AGG_SHARED_UPPER.toLowerCase()}`)
  await read(`/resource_providers?member_of=${AGG_SHARED_UPPER}`)
  for (const c of ids.consumers) await read(`/allocations/${c}`)
  for (const q of CANDIDATE_QUERIES) await read(`/allocation_candidates?${q}`)
  return out
}
