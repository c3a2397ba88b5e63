// The big data sets of `npm run bench -- --huge` (and --big), as POST /placemat/v1/batch bodies: the
// providers of ../shared/perf/load.mjs (placeload's flat providers, or the 9-provider
// compute-node trees of Placement's nested-perfload), made in chunks of whole units.
import crypto from 'node:crypto'
import net from 'node:net'

export const AGGREGATES = ['14a5c8a3-5a99-4e8f-88be-00d85fcb1c17', '66d98e7c-8b5d-4fd0-9b4e-8d6e0a3d1a57', 'a59dbb28-4c8e-4a3b-bd4f-6d1f2f1c7f65']
const TRAITS = ['HW_CPU_X86_AVX2', 'HW_CPU_X86_SSE2', 'STORAGE_DISK_SSD']
const FLAT_INVENTORY = {
  MEMORY_MB: {total: 8192, min_unit: 128, max_unit: 8192},
  DISK_GB: {total: 8192, min_unit: 5, max_unit: 8192},
  VCPU: {total: 32, min_unit: 1, max_unit: 16},
}
const PF_INVENTORY = {SRIOV_NET_VF: {total: 8}, NET_BW_EGR_KILOBIT_PER_SEC: {total: 10000000}, NET_BW_IGR_KILOBIT_PER_SEC: {total: 10000000}}
const PF_TRAITS = ['CUSTOM_PHYSNET_PHYSNET0', 'CUSTOM_VNIC_TYPE_DIRECT']

function provider(ops, {name, parent, inventories, aggregates, traits}) {
  const uuid = crypto.randomUUID()
  ops.push({op: 'create_provider', uuid, name: name ? `${name}-${uuid}` : uuid, ...(parent ? {parent_provider_uuid: parent} : {})})
  if (inventories) ops.push({op: 'set_inventories', uuid, inventories})
  if (aggregates?.length) ops.push({op: 'set_aggregates', uuid, aggregates})
  if (traits?.length) ops.push({op: 'set_traits', uuid, traits})
  return uuid
}

function flat(ops, i) {
  provider(ops, {inventories: FLAT_INVENTORY, aggregates: AGGREGATES.slice(0, (i % 3) + 1), traits: TRAITS.slice(0, (Math.floor(i / 3) % 3) + 1)})
}

function tree(ops) {
  const cn = provider(ops, {inventories: {DISK_GB: {total: 20480}}, traits: ['COMPUTE_VOLUME_MULTI_ATTACH']})
  const n0 = provider(ops, {
    name: 'numa 0',
    parent: cn,
    inventories: {VCPU: {total: 4, reserved: 2}, MEMORY_MB: {total: 2048, min_unit: 512, step_size: 256}},
    traits: ['HW_NUMA_ROOT'],
  })
  provider(ops, {name: 'fpga0-0', parent: n0, inventories: {FPGA: {total: 1}}})
  provider(ops, {name: 'pgpu0-0', parent: n0, inventories: {VGPU: {total: 8}}})
  provider(ops, {name: 'pf0', parent: n0, inventories: PF_INVENTORY, traits: PF_TRAITS})
  const n1 = provider(ops, {
    name: 'numa 1',
    parent: cn,
    inventories: {VCPU: {total: 4}, MEMORY_MB: {total: 2048, min_unit: 256, max_unit: 1024}},
    traits: ['HW_NUMA_ROOT', 'CUSTOM_FOO'],
  })
  provider(ops, {name: 'fpga1-0', parent: n1, inventories: {FPGA: {total: 1}}})
  provider(ops, {name: 'fpga1-1', parent: n1, inventories: {FPGA: {total: 1}}})
  provider(ops, {name: 'pf1', parent: n1, inventories: PF_INVENTORY, traits: PF_TRAITS})
}

/** Batch bodies making `n` flat providers or `n` nested trees, `perChunk` providers a body. */
export function* batchBodies(mode, n, perChunk = 10000) {
  const units = mode === 'nested' ? Math.max(1, Math.floor(perChunk / 9)) : perChunk
  for (let start = 0; start < n; start += units) {
    const operations = start === 0 && mode === 'nested' ? ['CUSTOM_FOO', ...PF_TRAITS].map((name) => ({op: 'ensure_trait', name})) : []
    for (let i = start; i < Math.min(n, start + units); i++) {
      if (mode === 'nested') tree(operations)
      else flat(operations, i)
    }
    yield {operations}
  }
}

/** A TCP port free on loopback now (for a daemon the bench starts). */
export const freePort = () =>
  new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const {port} = srv.address()
      srv.close(() => resolve(port))
    })
  })

/** Makes the set on the placemat at `url` through its batch API; returns the providers made. */
export async function loadThroughBatch(url, mode, n) {
  let providers = 0
  for (const body of batchBodies(mode, n)) {
    const res = await fetch(url + '/placemat/v1/batch', {
      method: 'POST',
      headers: {'content-type': 'application/json', 'x-auth-token': 'admin'},
      body: JSON.stringify(body),
    })
    if (!res.ok) throw new Error(`bulk load failed: ${res.status} ${(await res.text()).slice(0, 300)}`)
    providers += body.operations.filter((o) => o.op === 'create_provider').length
  }
  return providers
}
