/**
 * `placemat audit` and `placemat top` on the real binary, against a daemon (--url) and a
 * SQLite file (--db) holding the same cloud (fixtures/cloud.yaml) and the same allocations.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {PlacementClient} from '../../src/client/client.js'
import {HttpTransport} from '../../src/client/transports.js'
import {LocalTransport} from '../../src/cli/backend/local-transport.js'
import {startServer, type RunningServer} from '../../src/daemon/server.js'
import {ROOT, placemat} from '../helpers/cli.js'
import {newDb} from '../helpers/endpoints.js'
const run = (args: string[]) => placemat(args)

const CLOUD = path.join(ROOT, 'fixtures', 'cloud.yaml')

const KNOWN_1 = '7a1e0c52-0000-4000-8000-000000000001'
const KNOWN_2 = '7a1e0c52-0000-4000-8000-000000000002'
const ORPHAN = 'dead0000-0000-4000-8000-00000000000f'
const LEGACY = 'dead0000-0000-4000-8000-0000000000aa'

let dir: string
let server: RunningServer
let db: string
let targets: {name: string; args: string[]; client: () => Promise<PlacementClient>}[]
let numa0: string
let ceph: string

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-audit-'))
  server = await startServer({db: path.join(dir, 'daemon.db'), host: '127.0.0.1', port: 0, auth: 'noauth2'})
  db = path.join(dir, 'file.db')
  await newDb(db)
  targets = [
    {
      name: 'daemon',
      args: ['--url', server.url, '--token', 'admin'],
      client: async () => new PlacementClient(new HttpTransport(server.url, 'admin')),
    },
    {name: 'file', args: ['--db', db], client: async () => new PlacementClient(await LocalTransport.open(db))},
  ]
  for (const t of targets) {
    const r = await run(['apply', CLOUD, ...t.args])
    expect(r.code, r.stderr).toBe(0)
    const client = await t.client()
    try {
      const {resource_providers} = await client.get('/resource_providers')
      const uuid = (name: string) => resource_providers.find((p: any) => p.name === name).uuid
      numa0 = uuid('cmp-a01_numa0')
      ceph = uuid('ceph-rack-a')
      const put = (consumer: string, allocations: Record<string, Record<string, number>>) =>
        client.put(`/allocations/${consumer}`, {
          allocations: Object.fromEntries(Object.entries(allocations).map(([rp, resources]) => [rp, {resources}])),
          project_id: 'proj',
          user_id: 'user',
          consumer_generation: null,
          consumer_type: 'INSTANCE',
        })
      await put(KNOWN_1, {[numa0]: {VCPU: 40, MEMORY_MB: 8192}, [ceph]: {DISK_GB: 100}})
      await put(KNOWN_2, {[numa0]: {VCPU: 40}})
      await put(ORPHAN, {[numa0]: {VCPU: 4}})
      // written before microversion 1.8: no project or user (Placement's placeholder ids)
      await client.put(
        `/allocations/${LEGACY}`,
        {allocations: [{resource_provider: {uuid: ceph}, resources: {DISK_GB: 10}}]},
        {version: '1.7'},
      )
    } finally {
      await client.close()
    }
  }
}, 60_000)

afterAll(async () => {
  await server?.close()
  fs.rmSync(dir, {recursive: true, force: true})
})

describe('placemat audit', () => {
  it('finds orphans, incomplete consumers and over-capacity; --delete removes orphan allocations; exit codes', async () => {
    const known = path.join(dir, 'known.txt')
    fs.writeFileSync(known, `# instances nova knows\n${KNOWN_1}\n\n${KNOWN_2.toUpperCase()}\n`)
    const knownYaml = path.join(dir, 'known.yaml')
    fs.writeFileSync(knownYaml, `- ${KNOWN_1}\n- ${KNOWN_2}\n- ${LEGACY}\n`)

    for (const t of targets) {
      // without the list: no orphan check, the legacy consumer is incomplete; exit 0 without --exit-code
      const plain = await run(['audit', ...t.args])
      expect(plain.code, plain.stderr).toBe(0)
      expect(plain.stdout).toContain('Orphan allocations not checked')
      expect(plain.stdout).toMatch(new RegExp(`incomplete\\s+${LEGACY}`))

      const withList = await run(['audit', '--known-consumers', known, '--json', ...t.args])
      expect(withList.code, withList.stderr).toBe(0)
      const doc = JSON.parse(withList.stdout)
      expect(doc.transport).toBe('placemat')
      expect(doc.summary).toMatchObject({orphan_allocations: 2, over_capacity: 0, incomplete_consumer: 1, empty_consumer: 0})
      expect(
        doc.findings
          .filter((f: any) => f.kind === 'orphan_allocations')
          .map((f: any) => f.consumer)
          .sort(),
      ).toEqual([ORPHAN, LEGACY].sort())

      // the YAML list form, and --exit-code
      const strict = await run(['audit', '--known-consumers', knownYaml, '--exit-code', ...t.args])
      expect(strict.code).toBe(7)
      expect(strict.stdout).toMatch(new RegExp(`orphan\\s+${ORPHAN}\\s+VCPU=4 on cmp-a01_numa0`))
    }

    // lower an inventory below what is allocated (Placement allows it): over capacity
    const text = fs.readFileSync(CLOUD, 'utf8')
    const lowered = text.replace(
      '      - name: cmp-a01_numa0\n        inventories:\n          VCPU: {total: 24, allocation_ratio: 4.0}',
      '      - name: cmp-a01_numa0\n        inventories:\n          VCPU: {total: 20, allocation_ratio: 4.0}',
    )
    expect(lowered).not.toBe(text)
    const lowFile = path.join(dir, 'lowered.yaml')
    fs.writeFileSync(lowFile, lowered)
    for (const t of targets) {
      const applied = await run(['apply', lowFile, ...t.args])
      expect(applied.code, applied.stderr).toBe(0)
      const r = await run(['audit', '--known-consumers', knownYaml, '--json', '--exit-code', ...t.args])
      expect(r.code).toBe(7)
      const doc = JSON.parse(r.stdout)
      expect(doc.findings.find((f: any) => f.kind === 'over_capacity')).toMatchObject({
        name: 'cmp-a01_numa0',
        resource_class: 'VCPU',
        used: 84,
        capacity: 80,
      })
    }

    // --delete removes the orphan's allocations; that also ends the over-capacity (84 - 4 = 80),
    // but the legacy consumer (known here) stays incomplete: exit 7
    for (const t of targets) {
      const r = await run(['audit', '--known-consumers', knownYaml, '--delete', '--exit-code', ...t.args])
      expect(r.code, r.stdout + r.stderr).toBe(7)
      expect(r.stdout).toMatch(/1 orphan\(s\) deleted, 1 finding\(s\) left/)
      const client = await t.client()
      try {
        expect((await client.get(`/allocations/${ORPHAN}`)).allocations).toEqual({})
        expect(Object.keys((await client.get(`/allocations/${KNOWN_1}`)).allocations)).toHaveLength(2)
      } finally {
        await client.close()
      }
      // with the text list the legacy consumer is an orphan too: deleting it leaves nothing
      const r2 = await run(['audit', '--known-consumers', known, '--delete', '--exit-code', ...t.args])
      expect(r2.code, r2.stdout + r2.stderr).toBe(0)
      expect(r2.stdout).toMatch(/1 orphan\(s\) deleted, 0 finding\(s\) left/)
      const clean = await run(['audit', '--known-consumers', known, '--exit-code', ...t.args])
      expect(clean.code).toBe(0)
      expect(clean.stdout).toMatch(/^No findings \(22 providers, 2 consumers checked\)\./)
    }
  }, 120_000)

  it('rejects --delete without a list and a bad list (exit 2)', async () => {
    const r = await run(['audit', '--delete', ...targets[0].args])
    expect(r.code).toBe(2)
    const bad = path.join(dir, 'bad.txt')
    fs.writeFileSync(bad, 'not-a-uuid\n')
    const r2 = await run(['audit', '--known-consumers', bad, ...targets[0].args])
    expect(r2.code).toBe(2)
    expect(r2.stderr).toContain('line 1: not-a-uuid')
  }, 60_000)
})

describe('placemat top', () => {
  it('prints one plain-text frame and exits when stdout is not a terminal', async () => {
    for (const t of targets) {
      const r = await run(['top', '--interval', '1', ...t.args])
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toMatch(/^placemat top /)
      expect(r.stdout).not.toMatch(/\x1b\[/)
      expect(r.stdout).toMatch(/^VCPU\s+\[#*\.*\]\s+\d+\s+\d+\s+[\d.]+%$/m)
      expect(r.stdout).toContain('FULLEST PROVIDERS')
      expect(r.stdout).toMatch(/^cmp-a01_numa0\s+VCPU\s+\[/m)
      expect(r.stdout).toContain('RECENT CLAIMS')
      expect(r.stdout).toContain(KNOWN_1)

      const once = JSON.parse((await run(['top', '--once', '--json', ...t.args])).stdout)
      expect(once).toMatchObject({transport: 'placemat', providers: 22})
      const vcpu = once.classes.find((c: any) => c.resource_class === 'VCPU')
      expect(vcpu.used).toBeGreaterThan(0)
      expect(vcpu.capacity).toBeGreaterThan(vcpu.used)
      expect(once.fullest[0].name).toBe('cmp-a01_numa0')
    }
  }, 60_000)
})
