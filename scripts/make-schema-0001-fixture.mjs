#!/usr/bin/env node
/**
 * Writes fixtures/db/schema-0001.db: a small but complete placemat database in the FIRST
 * schema (migration 0001_initial), kept so every later migration can be tested on real
 * old data (`placemat db upgrade` must lose nothing), and beside it schema-0001.yaml, the
 * `placemat export` of that state, which an upgraded copy must still export.
 *
 *   npx tsc -p . && node scripts/make-schema-0001-fixture.mjs [OUT]
 *
 * It only runs while 0001_initial is the newest migration: once a later migration
 * exists, this script would write the new schema, so the committed file is the record
 * and must not be regenerated. Everything goes through the Placement API (the in-process
 * app on the file), with a fixed clock so the content is the same on every run.
 */
import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import SQLite from 'better-sqlite3'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const out = path.resolve(process.argv[2] ?? path.join(root, 'fixtures/db/schema-0001.db'))

const {LATEST_MIGRATION} = await import(path.join(root, 'dist/src/store/schema.js'))
if (LATEST_MIGRATION !== '0001_initial') {
  console.error(`the newest migration is ${LATEST_MIGRATION}: this fixture records schema 0001 and must not be regenerated`)
  process.exit(1)
}

// A fixed clock: every write gets the next second from 2024-01-01T00:00:00Z.
let clock = Date.UTC(2024, 0, 1)
Date.now = () => (clock += 1000)

const {LocalTransport} = await import(path.join(root, 'dist/src/cli/backend/local-transport.js'))
const {PlacementClient} = await import(path.join(root, 'dist/src/client/client.js'))

for (const suffix of ['', '-wal', '-shm']) fs.rmSync(out + suffix, {force: true})
fs.mkdirSync(path.dirname(out), {recursive: true})

const transport = await LocalTransport.open(out, {migrate: true})
const client = new PlacementClient(transport)

const IDS = {
  cn1: 'c0000001-0000-4000-8000-000000000001',
  numa0: 'c0000001-0000-4000-8000-000000000010',
  numa1: 'c0000001-0000-4000-8000-000000000011',
  pgpu0: 'c0000001-0000-4000-8000-000000000100',
  cn2: 'c0000002-0000-4000-8000-000000000001',
  storage: '5a000001-0000-4000-8000-000000000001',
  agg1: 'a9900001-0000-4000-8000-000000000001',
  agg2: 'a9900002-0000-4000-8000-000000000002',
  vm1: '11111111-0000-4000-8000-000000000001',
  vm2: '11111111-0000-4000-8000-000000000002',
  vm3: '11111111-0000-4000-8000-000000000003',
  migration: '22222222-0000-4000-8000-000000000001',
  legacy: '33333333-0000-4000-8000-000000000001',
  project: 'f0000001-0000-4000-8000-000000000001',
  user: 'e0000001-0000-4000-8000-000000000001',
}

const gen = async (uuid) => (await client.get(`/resource_providers/${uuid}`)).generation

async function provider(uuid, name, parent) {
  await client.post('/resource_providers', {uuid, name, ...(parent ? {parent_provider_uuid: parent} : {})})
}

async function inventories(uuid, inv) {
  await client.put(`/resource_providers/${uuid}/inventories`, {resource_provider_generation: await gen(uuid), inventories: inv})
}

async function traits(uuid, list) {
  await client.put(`/resource_providers/${uuid}/traits`, {resource_provider_generation: await gen(uuid), traits: list})
}

async function aggregates(uuid, list) {
  await client.put(`/resource_providers/${uuid}/aggregates`, {resource_provider_generation: await gen(uuid), aggregates: list})
}

// Custom resource class and traits.
await client.put('/resource_classes/CUSTOM_FPGA_SLOT', undefined)
await client.put('/traits/CUSTOM_RACK_A1', undefined)
await client.put('/traits/CUSTOM_UNUSED_TRAIT', undefined)

// A nested tree: cn1 -> numa0 -> pgpu0, cn1 -> numa1; a second compute node; a sharing storage provider.
await provider(IDS.cn1, 'cn1')
await provider(IDS.numa0, 'cn1_numa0', IDS.cn1)
await provider(IDS.numa1, 'cn1_numa1', IDS.cn1)
await provider(IDS.pgpu0, 'cn1_numa0_pgpu0', IDS.numa0)
await provider(IDS.cn2, 'cn2')
await provider(IDS.storage, 'shared-storage')

await inventories(IDS.cn1, {
  MEMORY_MB: {total: 65536, reserved: 512, allocation_ratio: 1.5, max_unit: 32768},
  DISK_GB: {total: 1000, reserved: 10, step_size: 10, min_unit: 10},
})
await inventories(IDS.numa0, {VCPU: {total: 16, allocation_ratio: 4.0, max_unit: 8}})
await inventories(IDS.numa1, {VCPU: {total: 16, allocation_ratio: 4.0, max_unit: 8}, CUSTOM_FPGA_SLOT: {total: 2}})
await inventories(IDS.pgpu0, {VGPU: {total: 8, max_unit: 4}})
await inventories(IDS.cn2, {VCPU: {total: 32}, MEMORY_MB: {total: 131072}})
await inventories(IDS.storage, {DISK_GB: {total: 20000, reserved: 100, allocation_ratio: 1.0}})

await traits(IDS.cn1, ['HW_CPU_X86_AVX2', 'COMPUTE_STATUS_DISABLED', 'CUSTOM_RACK_A1'])
await traits(IDS.numa0, ['HW_NUMA_ROOT'])
await traits(IDS.pgpu0, ['HW_GPU_API_VULKAN'])
await traits(IDS.storage, ['MISC_SHARES_VIA_AGGREGATE'])
await aggregates(IDS.cn1, [IDS.agg1])
await aggregates(IDS.cn2, [IDS.agg1, IDS.agg2])
await aggregates(IDS.storage, [IDS.agg1])

const put = (consumer, allocations, extra, version) =>
  client.put(
    `/allocations/${consumer}`,
    {allocations: Object.fromEntries(Object.entries(allocations).map(([rp, resources]) => [rp, {resources}])), ...extra},
    version ? {version} : undefined,
  )
const own = (user = IDS.user) => ({project_id: IDS.project, user_id: user, consumer_generation: null})

// Typed consumers (1.38+), an untyped one (written at 1.37), an incomplete one (1.0: no project/user).
await put(
  IDS.vm1,
  {[IDS.cn1]: {MEMORY_MB: 4096}, [IDS.numa0]: {VCPU: 4}, [IDS.pgpu0]: {VGPU: 4}, [IDS.storage]: {DISK_GB: 40}},
  {
    ...own(),
    consumer_type: 'INSTANCE',
  },
)
await put(
  IDS.vm2,
  {[IDS.cn1]: {MEMORY_MB: 2048, DISK_GB: 20}, [IDS.numa1]: {VCPU: 2, CUSTOM_FPGA_SLOT: 1}},
  {
    ...own('e0000002-0000-4000-8000-000000000002'),
    consumer_type: 'INSTANCE',
  },
)
await put(IDS.vm3, {[IDS.cn2]: {VCPU: 8, MEMORY_MB: 16384}}, own(), '1.37')
await put(IDS.migration, {[IDS.cn2]: {VCPU: 2, MEMORY_MB: 1024}}, {...own(), consumer_type: 'MIGRATION'})
await client.put(
  `/allocations/${IDS.legacy}`,
  {allocations: [{resource_provider: {uuid: IDS.cn2}, resources: {VCPU: 1}}]},
  {version: '1.0'},
)
// A consumer whose generation moved on: rewritten twice.
await put(IDS.vm3, {[IDS.cn2]: {VCPU: 4, MEMORY_MB: 8192}}, {...own(), consumer_generation: 1}, '1.37')

// The export of this state, which an upgraded copy must still give (test/db-upgrade.test.ts).
const {exportSnapshot} = await import(path.join(root, 'dist/src/cli/services/state-export.js'))
const {snapshotText} = await import(path.join(root, 'dist/src/cli/formats/snapshot-write.js'))
const exported = out.replace(/\.db$/, '.yaml')
fs.writeFileSync(exported, snapshotText(await exportSnapshot(client), 'yaml'))

await transport.close()
// One self-contained file, no WAL beside it.
const raw = new SQLite(out)
raw.pragma('journal_mode = DELETE')
// kysely stamps migrations with the real time; the fixture keeps a fixed one.
raw.prepare('update kysely_migration set timestamp = ?').run(new Date(Date.UTC(2024, 0, 1)).toISOString())
raw.exec('VACUUM')
raw.close()
console.log(`wrote ${path.relative(process.cwd(), out)} and ${path.relative(process.cwd(), exported)}`)
