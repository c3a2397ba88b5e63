// The big data sets of `npm run bench -- --huge` (and --big), as POST /placemat/v1/batch bodies: the
// providers of ../shared/perf/load.mjs (placeload's flat providers, or the 9-provider
// compute-node trees of Placement's nested-perfload), made in chunks of whole units; or the same
// written as rows of OpenStack Placement's tables (bench-scaleout --placement).
import crypto from 'node:crypto'

export const AGGREGATES = [
  '14a5c8a3-5a99-4e8f-88be-00d85fcb1c17',
  '66d98e7c-8b5d-4fd0-9b4e-8d6e0a3d1a57',
  'a59dbb28-4c8e-4a3b-bd4f-6d1f2f1c7f65',
]
const TRAITS = ['HW_CPU_X86_AVX2', 'HW_CPU_X86_SSE2', 'STORAGE_DISK_SSD']
const FLAT_INVENTORY = {
  MEMORY_MB: {total: 8192, min_unit: 128, max_unit: 8192},
  DISK_GB: {total: 8192, min_unit: 5, max_unit: 8192},
  VCPU: {total: 32, min_unit: 1, max_unit: 16},
}
const PF_INVENTORY = {
  SRIOV_NET_VF: {total: 8},
  NET_BW_EGR_KILOBIT_PER_SEC: {total: 10000000},
  NET_BW_IGR_KILOBIT_PER_SEC: {total: 10000000},
}
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
  provider(ops, {
    inventories: FLAT_INVENTORY,
    aggregates: AGGREGATES.slice(0, (i % 3) + 1),
    traits: TRAITS.slice(0, (Math.floor(i / 3) % 3) + 1),
  })
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

/**
 * The rows Placement's HTTP API would have written for the set, a chunk at a time: a provider's
 * root_provider_id is its own id (or its parent's root), its generation one per inventories,
 * aggregates or traits write. Ids from `firstId` on.
 */
function* placementRows(mode, n, firstId) {
  let nextId = firstId
  for (const {operations} of batchBodies(mode, n)) {
    const made = new Map()
    const chunk = {providers: [], traits: new Set(), aggregates: new Set(), inventories: [], aggregateLinks: [], traitLinks: []}
    for (const op of operations) {
      if (op.op === 'ensure_trait') {
        chunk.traits.add(op.name)
        continue
      }
      if (op.op === 'create_provider') {
        const parent = op.parent_provider_uuid ? made.get(op.parent_provider_uuid) : null
        const id = nextId++
        made.set(op.uuid, {id, uuid: op.uuid, name: op.name, parent: parent?.id ?? null, root: parent ? parent.root : id, generation: 0})
        continue
      }
      const p = made.get(op.uuid)
      p.generation++
      if (op.op === 'set_inventories') {
        for (const [rc, v] of Object.entries(op.inventories)) {
          chunk.inventories.push({
            p: p.id,
            rc,
            total: v.total,
            reserved: v.reserved ?? 0,
            min: v.min_unit ?? 1,
            max: v.max_unit ?? 2147483647,
            step: v.step_size ?? 1,
            ratio: v.allocation_ratio ?? 1.0,
          })
        }
      } else if (op.op === 'set_aggregates') {
        for (const u of op.aggregates) {
          chunk.aggregates.add(u)
          chunk.aggregateLinks.push({p: p.id, u})
        }
      } else if (op.op === 'set_traits') {
        for (const name of op.traits) {
          chunk.traitLinks.push({p: p.id, name})
        }
      } else throw new Error(`placementRows: no row for ${op.op}`)
    }
    chunk.providers = [...made.values()]
    yield chunk
  }
}

const column = (rows, key) => rows.map((r) => r[key])
const PG_UTC_NOW = "(now() at time zone 'utc')"

/**
 * Writes the set straight into the tables of an OpenStack Placement database on PostgreSQL (after
 * `placement-manage db sync` and one start of its API, which adds the standard resource classes
 * and traits), as its HTTP API would have written the same operations one by one, the times in
 * UTC. Placement has no batch API, and through its HTTP API it loads about 50 providers a second
 * here (four writes each). `client` is a node-postgres client. Returns the providers made.
 */
export async function loadIntoPlacementTables(client, mode, n) {
  let providers = 0
  await client.query('begin')
  try {
    const {rows} = await client.query('select coalesce(max(id), 0) as max from resource_providers')
    for (const c of placementRows(mode, n, Number(rows[0].max) + 1)) {
      const now = PG_UTC_NOW
      await client.query(`insert into traits (name, created_at) select unnest($1::text[]), ${now} on conflict (name) do nothing`, [
        [...c.traits],
      ])
      await client.query(
        `insert into placement_aggregates (uuid, created_at) select unnest($1::text[]), ${now} on conflict (uuid) do nothing`,
        [[...c.aggregates]],
      )
      const ps = c.providers
      await client.query(
        `insert into resource_providers (id, uuid, name, generation, parent_provider_id, root_provider_id, created_at, updated_at)
         select id, uuid, name, generation, parent, root, ${now}, case when generation > 0 then ${now} end
         from unnest($1::int[], $2::text[], $3::text[], $4::int[], $5::int[], $6::int[]) as t(id, uuid, name, generation, parent, root)`,
        ['id', 'uuid', 'name', 'generation', 'parent', 'root'].map((k) => column(ps, k)),
      )
      const inv = c.inventories
      const written = await client.query(
        `insert into inventories (resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio, created_at)
         select t.p, rc.id, t.total, t.reserved, t.min, t.max, t.step, t.ratio, ${now}
         from unnest($1::int[], $2::text[], $3::int[], $4::int[], $5::int[], $6::int[], $7::int[], $8::float8[]) as t(p, rc, total, reserved, min, max, step, ratio)
         join resource_classes rc on rc.name = t.rc`,
        ['p', 'rc', 'total', 'reserved', 'min', 'max', 'step', 'ratio'].map((k) => column(inv, k)),
      )
      if (written.rowCount !== inv.length) throw unknownNames('resource class', inv, 'rc', 'resource_classes')
      await client.query(
        `insert into resource_provider_aggregates (resource_provider_id, aggregate_id, created_at)
         select t.p, a.id, ${now} from unnest($1::int[], $2::text[]) as t(p, u) join placement_aggregates a on a.uuid = t.u`,
        [column(c.aggregateLinks, 'p'), column(c.aggregateLinks, 'u')],
      )
      const linked = await client.query(
        `insert into resource_provider_traits (resource_provider_id, trait_id, created_at)
         select t.p, tr.id, ${now} from unnest($1::int[], $2::text[]) as t(p, name) join traits tr on tr.name = t.name`,
        [column(c.traitLinks, 'p'), column(c.traitLinks, 'name')],
      )
      if (linked.rowCount !== c.traitLinks.length) throw unknownNames('trait', c.traitLinks, 'name', 'traits')
      providers += ps.length
    }
    // The ids were given here: the sequence goes on after them, for the providers the API makes.
    await client.query(`select setval(pg_get_serial_sequence('resource_providers', 'id'), (select max(id) from resource_providers))`)
    await client.query('commit')
  } catch (err) {
    await client.query('rollback').catch(() => {})
    throw err
  }
  return providers
}

/**
 * The same into Placement's tables on MariaDB (its usual home); `conn` is a mysql2/promise
 * connection. The rows go as multi-row inserts of at most 5,000 rows each, under
 * max_allowed_packet; the auto-increment goes on after the ids given here by itself.
 */
export async function loadIntoPlacementTablesMysql(conn, mode, n) {
  const insert = async (sqlText, rows) => {
    for (let i = 0; i < rows.length; i += 5000) await conn.query(sqlText, [rows.slice(i, i + 5000)])
  }
  let providers = 0
  await conn.query('start transaction')
  try {
    const [[{max}]] = await conn.query('select coalesce(max(id), 0) as max from resource_providers')
    const [classes] = await conn.query('select id, name from resource_classes')
    const classId = new Map(classes.map((r) => [r.name, r.id]))
    for (const c of placementRows(mode, n, Number(max) + 1)) {
      const now = new Date()
      await insert(
        'insert ignore into traits (name, created_at) values ?',
        [...c.traits].map((t) => [t, now]),
      )
      await insert(
        'insert ignore into placement_aggregates (uuid, created_at) values ?',
        [...c.aggregates].map((u) => [u, now]),
      )
      await insert(
        'insert into resource_providers (id, uuid, name, generation, parent_provider_id, root_provider_id, created_at, updated_at) values ?',
        c.providers.map((p) => [p.id, p.uuid, p.name, p.generation, p.parent, p.root, now, p.generation > 0 ? now : null]),
      )
      const missing = c.inventories.filter((i) => !classId.has(i.rc))
      if (missing.length) throw unknownNames('resource class', missing, 'rc', 'resource_classes')
      await insert(
        'insert into inventories (resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio, created_at) values ?',
        c.inventories.map((i) => [i.p, classId.get(i.rc), i.total, i.reserved, i.min, i.max, i.step, i.ratio, now]),
      )
      const ids = async (table, key, names) => {
        if (!names.length) return new Map()
        const [rows] = await conn.query(`select id, ${key} as k from ${table} where ${key} in (?)`, [names])
        return new Map(rows.map((r) => [r.k, r.id]))
      }
      const aggregateId = await ids('placement_aggregates', 'uuid', [...new Set(column(c.aggregateLinks, 'u'))])
      await insert(
        'insert into resource_provider_aggregates (resource_provider_id, aggregate_id, created_at) values ?',
        c.aggregateLinks.map((l) => [l.p, aggregateId.get(l.u), now]),
      )
      const traitId = await ids('traits', 'name', [...new Set(column(c.traitLinks, 'name'))])
      const unknown = c.traitLinks.filter((l) => !traitId.has(l.name))
      if (unknown.length) throw unknownNames('trait', unknown, 'name', 'traits')
      await insert(
        'insert into resource_provider_traits (resource_provider_id, trait_id, created_at) values ?',
        c.traitLinks.map((l) => [l.p, traitId.get(l.name), now]),
      )
      providers += c.providers.length
    }
    await conn.query('commit')
  } catch (err) {
    await conn.query('rollback').catch(() => {})
    throw err
  }
  return providers
}

function unknownNames(what, rows, key, table) {
  return new Error(`a ${what} of ${[...new Set(column(rows, key))].join(', ')} is not in ${table}`)
}
