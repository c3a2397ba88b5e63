/**
 * `placemat apply` on the real binary: against a SQLite file (--db), a placemat daemon
 * (--url, one batch transaction) and a plain Placement endpoint (the same daemon behind a
 * proxy that answers 404 under /placemat/, so the CLI falls back to the standard API).
 * All three must end in the same state; a second run plans nothing.
 */
import fs from 'node:fs'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {PlacementClient} from '../../src/client/client.js'
import {HttpTransport} from '../../src/client/transports.js'
import {LocalTransport} from '../../src/cli/backend/local-transport.js'
import {ROOT, placemat, type Result} from '../helpers/cli.js'
import {newDb, onFile, serverIn, startEndpoints, stopEndpoints, type Endpoints} from '../helpers/endpoints.js'
const run = (args: string[], script?: string) => placemat(args, {script})

const CLOUD = path.join(ROOT, 'fixtures', 'cloud.yaml')
const GEN = path.join(ROOT, 'scripts', 'gen-apply-fixture.mjs')

async function ok(args: string[]): Promise<Result> {
  const r = await run(args)
  expect(r.code, `placemat ${args.join(' ')}\n${r.stderr}\n${r.stdout.slice(0, 2000)}`).toBe(0)
  return r
}

const json = async (args: string[]) => JSON.parse((await ok([...args, '--json'])).stdout)

/** Everything apply manages, in a stable order (generations included: same operations, same generations). */
async function dump(client: PlacementClient) {
  const {providers} = await client.get('/placemat/v1/providers')
  const {traits} = await client.get('/traits', {query: {name: 'startswith:CUSTOM_'}})
  const {resource_classes} = await client.get('/resource_classes')
  return {
    providers: (providers as any[])
      .sort((a, b) => (a.uuid < b.uuid ? -1 : 1))
      .map((p) => ({...p, traits: [...p.traits].sort(), aggregates: [...p.aggregates].sort()})),
    traits: [...traits].sort(),
    classes: (resource_classes as {name: string}[])
      .map((c) => c.name)
      .filter((n) => n.startsWith('CUSTOM_'))
      .sort(),
  }
}

const dumpDb = (file: string) => onFile(file, dump)

let endpoints: Endpoints
let dir: string
let daemon: string[]
let plain: string[]
let daemonClient: PlacementClient
let plainClient: PlacementClient

beforeAll(async () => {
  endpoints = await startEndpoints('placemat-apply-')
  ;({dir, daemon, plain, daemonClient, plainClient} = endpoints)
})

afterAll(() => stopEndpoints(endpoints))

describe('placemat apply', () => {
  it('plans, applies once, and then plans nothing (file, daemon, plain Placement agree)', async () => {
    const db = path.join(dir, 'cloud.db')
    await newDb(db)
    const file = ['--db', db]

    // --dry-run changes nothing
    const dry = await ok(['apply', CLOUD, '--dry-run', ...file])
    expect(dry.stdout).toMatch(
      /^Plan: providers 22 to create, 0 to update, 0 to delete; 1 resource class and 4 traits to create; 2 aggregate names to keep\./,
    )
    expect(dry.stdout).toContain('+ aggregate name rack-a 6c3a1a52-4d8e-4b7e-9a51-0f4b8a1c2d01\n')
    expect(dry.stdout).toContain('+ provider cmp-a01_numa0 ')
    expect(dry.stdout).toContain('Dry run: nothing was changed.')
    // --summary: the counts alone, no line per change.
    const counts = await ok(['apply', CLOUD, '--dry-run', '--summary', ...file])
    expect(counts.stdout.split('\n').filter(Boolean)).toEqual([dry.stdout.split('\n')[0], 'Dry run: nothing was changed.'])
    expect((await dumpDb(db)).providers).toEqual([])
    const dryJson = await json(['apply', CLOUD, '--dry-run', ...file])
    expect(dryJson).toMatchObject({transport: 'placemat', applied: false, dry_run: true, summary: {create: 22, update: 0, delete: 0}})

    // apply on all three
    const [onFile, onDaemon, onPlain] = await Promise.all([
      json(['apply', CLOUD, ...file]),
      json(['apply', CLOUD, ...daemon]),
      json(['apply', CLOUD, ...plain]),
    ])
    expect(onFile).toMatchObject({transport: 'placemat', applied: true, summary: {create: 22}})
    expect(onDaemon).toMatchObject({transport: 'placemat', applied: true, summary: {create: 22}})
    expect(onPlain).toMatchObject({transport: 'placement', applied: true, summary: {create: 22}})
    expect(onDaemon.changes).toEqual(onFile.changes)
    // The same but the aggregates' names, which plain Placement has nowhere to keep.
    expect(onFile.summary.aggregate_names).toBe(2)
    expect(onPlain.summary.aggregate_names).toBe(0)
    expect(onPlain.changes).toEqual(onFile.changes.filter((c: any) => c.kind !== 'aggregate_name'))

    const state = await dumpDb(db)
    expect(state.providers).toHaveLength(22)
    expect(await dump(daemonClient)).toEqual(state)
    expect(await dump(plainClient)).toEqual(state)

    // the fixture's shape: nested trees, shared storage in aggregates with the compute nodes
    const byName = new Map(state.providers.map((p: any) => [p.name, p]))
    const numa = byName.get('cmp-a01_numa0')
    expect(numa.parent_provider_uuid).toBe(byName.get('cmp-a01').uuid)
    expect(numa.traits).toEqual(['HW_NUMA_ROOT'])
    expect(numa.inventories.VCPU).toMatchObject({total: 24, allocation_ratio: 4})
    expect(byName.get('ceph-rack-a').aggregates).toEqual(['6c3a1a52-4d8e-4b7e-9a51-0f4b8a1c2d01'])
    expect(byName.get('cmp-a01').aggregates).toEqual(['6c3a1a52-4d8e-4b7e-9a51-0f4b8a1c2d01'])
    // rack-b is named only: uuid5(placemat namespace, "aggregate:rack-b")
    expect(byName.get('ceph-rack-b').aggregates).toEqual(byName.get('cmp-b01').aggregates)
    expect(byName.get('ceph-rack-b').traits).toContain('MISC_SHARES_VIA_AGGREGATE')
    expect(state.classes).toEqual(['CUSTOM_FPGA_INTEL_ARRIA10'])

    // a second run plans nothing, on every transport
    for (const t of [file, daemon, plain]) {
      const again = await ok(['apply', CLOUD, ...t])
      expect(again.stdout.trim()).toBe('No changes: everything in the file is up to date.')
    }
    expect(await dumpDb(db)).toEqual(state)

    // the cloud written back as an apply file: applying it anywhere plans nothing, with --prune
    // too (placemat's aggregate names are in its `aggregates:` map, so none is dropped)
    for (const t of [file, daemon, plain]) {
      const written = path.join(dir, 'exported-apply.yaml')
      const exported = (await ok(['export', '--format', 'apply', ...t])).stdout
      fs.writeFileSync(written, exported)
      if (t !== plain) expect(exported).toContain('\naggregates:\n  rack-a: 6c3a1a52-4d8e-4b7e-9a51-0f4b8a1c2d01\n')
      for (const prune of [[], ['--prune', '--dry-run']]) {
        const again = await ok(['apply', written, ...prune, ...t])
        expect(again.stdout.trim(), `apply ${prune.join(' ')} ${t.join(' ')}`).toBe('No changes: everything in the file is up to date.')
      }
    }
    expect(await dumpDb(db)).toEqual(state)
  }, 120_000)

  it('updates only what differs, and --prune deletes what the file lost (never providers with allocations)', async () => {
    const db = path.join(dir, 'prune.db')
    await newDb(db)
    const file = ['--db', db]
    await ok(['apply', CLOUD, ...file])

    const text = fs.readFileSync(CLOUD, 'utf8')
    // cmp-b02 and its three children leave the file; cmp-b01's NUMA nodes get more VCPU
    const cut = text
      .slice(0, text.indexOf('  - name: cmp-b02'))
      .replace(/VCPU: \{total: 16, allocation_ratio: 8\.0\}/g, 'VCPU: {total: 20, allocation_ratio: 8.0}')
    const smaller = path.join(dir, 'smaller.yaml')
    fs.writeFileSync(smaller, cut)

    const keep = await ok(['apply', smaller, ...file])
    expect(keep.stdout).toMatch(/^Plan: providers 0 to create, 2 to update, 0 to delete\./)
    expect(keep.stdout).toMatch(/~ provider cmp-b01_numa0 \S+: VCPU total 16 -> 20/)
    expect((await dumpDb(db)).providers).toHaveLength(22)

    const pruneDry = await ok(['apply', smaller, '--prune', '--dry-run', ...file])
    expect(pruneDry.stdout).toMatch(/^Plan: providers 0 to create, 0 to update, 4 to delete\./)
    expect((await dumpDb(db)).providers).toHaveLength(22)

    // an allocation on a provider --prune would delete: refused, nothing changed
    const eno2 = (await dumpDb(db)).providers.find((p: any) => p.name === 'cmp-b02:eno2')
    const local = new PlacementClient(await LocalTransport.open(db))
    await local.put('/allocations/5e0d7f0e-0000-4000-8000-000000000001', {
      allocations: {[eno2.uuid]: {resources: {SRIOV_NET_VF: 1}}},
      project_id: 'p',
      user_id: 'u',
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    })
    const before = await dumpDb(db)
    const refused = await run(['apply', smaller, '--prune', ...file])
    expect(refused.code).toBe(4)
    expect(refused.stderr).toContain('--prune would delete 1 provider(s) that have allocations: cmp-b02:eno2')
    expect((await dumpDb(db)).providers).toEqual(before.providers)

    await local.delete('/allocations/5e0d7f0e-0000-4000-8000-000000000001')
    await local.close()
    const pruned = await json(['apply', smaller, '--prune', ...file])
    expect(pruned.summary).toMatchObject({create: 0, update: 0, delete: 4})
    const after = await dumpDb(db)
    expect(after.providers.map((p: any) => p.name)).not.toContain('cmp-b02')
    expect(after.providers).toHaveLength(18)
    expect((await ok(['apply', smaller, '--prune', ...file])).stdout.trim()).toBe('No changes: everything in the file is up to date.')
  }, 120_000)

  it('rejects a bad file with exit 2 and changes nothing', async () => {
    const bad = path.join(dir, 'bad.yaml')
    fs.writeFileSync(bad, 'providers:\n  - name: x\n    inventories: {VCPU: {reserved: 1}}\n    traits: [NOT_A_TRAIT]\n')
    const r = await run(['apply', bad, ...daemon])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('providers[0].inventories.VCPU: total is required')
    fs.writeFileSync(bad, 'providers:\n  - name: x\n    traits: [NOT_A_TRAIT]\n')
    const r2 = await run(['apply', bad, ...daemon])
    expect(r2.code).toBe(2)
    expect(r2.stderr).toContain('unknown trait NOT_A_TRAIT')
  }, 60_000)

  it('applies a generated many-provider file via a daemon and offline (functional check, not timed)', async () => {
    const n = 600
    const gen = await run([String(n)], GEN)
    expect(gen.code).toBe(0)
    const big = path.join(dir, 'big.yaml')
    fs.writeFileSync(big, gen.stdout)
    const db = path.join(dir, 'big.db')
    await newDb(db)
    const bigServer = await serverIn(dir, 'big-daemon.db')
    try {
      const viaDaemon = ['--url', bigServer.url, '--token', 'admin']
      const [a, b] = await Promise.all([json(['apply', big, '--db', db]), json(['apply', big, ...viaDaemon])])
      expect(a.summary.create).toBe(n)
      expect(b.summary.create).toBe(n)
      const state = await dumpDb(db)
      expect(state.providers).toHaveLength(n)
      expect(await dump(new PlacementClient(new HttpTransport(bigServer.url, 'admin')))).toEqual(state)
      for (const t of [['--db', db], viaDaemon]) {
        expect((await ok(['apply', big, ...t])).stdout.trim()).toBe('No changes: everything in the file is up to date.')
      }
      // --variant changes the inventories of every 7th compute node
      const changed = await run([String(n), '--variant', '7'], GEN)
      fs.writeFileSync(big, changed.stdout)
      const upd = await json(['apply', big, '--db', db])
      expect(upd.summary).toMatchObject({create: 0, delete: 0})
      expect(upd.summary.update).toBeGreaterThan(0)
    } finally {
      await bigServer.close()
    }
  }, 180_000)
})
