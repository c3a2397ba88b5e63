/**
 * Big JSON files, read piece by piece: `placemat import` of a JSON snapshot writes it in
 * chunks inside one transaction (a snapshot that goes wrong half way writes nothing), and
 * `placemat apply --db` of a JSON file runs its batch on the store in process. The files are
 * scripts/gen-huge.mjs's, small here; the same script makes the million-provider ones.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {dumpDb, placemat, script} from '../helpers/db-tools.js'
import {newDb, onFile} from '../helpers/endpoints.js'
import {postgresAvailable, startPostgres} from '../helpers/postgres.js'

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-streamed-'))
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

async function generate(args: string[]): Promise<void> {
  const r = await script('scripts/gen-huge.mjs', args)
  expect(r.code, r.stderr).toBe(0)
}

/** More providers than one chunk of inventory rows holds (3,750 rows, three a provider), so rows are written before the end. */
const PROVIDERS = 1500

describe('import of a JSON snapshot', () => {
  it('export -> import -> export gives the same text, and the generator writes what export writes', async () => {
    const snap = path.join(dir, 'snap.json')
    await generate(['--snapshot', snap, '300', '--consumers', '40'])
    const db = path.join(dir, 'imported.db')
    const imp = await placemat(['import', snap, '--db', db])
    expect(imp.code, imp.stderr).toBe(0)
    expect(imp.stdout).toBe(`imported into ${db}: 300 providers, 40 consumers, 80 allocations, 0 custom classes, 0 custom traits\n`)
    const exported = await placemat(['export', '--db', db, '--json'])
    expect(exported.code, exported.stderr).toBe(0)
    expect(exported.stdout).toBe(fs.readFileSync(snap, 'utf8'))

    // And again from standard input, one provider a line.
    const again = path.join(dir, 'again.db')
    const piped = await placemat(['import', '-', '--db', again], {input: exported.stdout.replace(/\n {6,}/g, ' ')})
    expect(piped.code, piped.stderr).toBe(0)
    expect((await placemat(['export', '--db', again, '--json'])).stdout).toBe(exported.stdout)
  })

  it('takes children before their parents, and refuses parents in a loop', async () => {
    const inv = {VCPU: {total: 8, reserved: 0, min_unit: 1, max_unit: 8, step_size: 1, allocation_ratio: 1}}
    const provider = (n: number, parent: number | null) => ({
      uuid: `00000000-0000-4000-8000-00000000000${n}`,
      name: `p${n}`,
      generation: n,
      parent_provider_uuid: parent === null ? null : `00000000-0000-4000-8000-00000000000${parent}`,
      inventories: inv,
      traits: [],
      aggregates: [],
    })
    // 1 is the root of 2, 2 of 3; 4 is alone. Listed deepest first.
    const tree = [provider(3, 2), provider(4, null), provider(2, 1), provider(1, null)]
    const snap = (providers: unknown[]) =>
      JSON.stringify({placemat_snapshot: 1, resource_classes: [], traits: [], providers, consumers: []})
    const db = path.join(dir, 'tree.db')
    const r = await placemat(['import', '-', '--db', db], {input: snap(tree)})
    expect(r.code, r.stderr).toBe(0)
    const exported = JSON.parse((await placemat(['export', '--db', db, '--json'])).stdout)
    expect(exported.providers.map((p: {name: string}) => p.name)).toEqual(['p1', 'p2', 'p3', 'p4'])
    expect(exported.providers[2]).toEqual(provider(3, 2))

    const loop = path.join(dir, 'loop.db')
    const l = await placemat(['import', '-', '--db', loop], {input: snap([provider(1, 2), provider(2, 1), provider(3, null)])})
    expect(l.code).toBe(2)
    expect(l.stderr).toMatch(/the provider parents form a loop/)
    expect(fs.existsSync(loop)).toBe(false)
  })

  describe('a snapshot that goes wrong half way writes nothing (exit 2)', () => {
    const snap = path.join(dir, 'big.json')
    const lines = () => fs.readFileSync(snap, 'utf8').split('\n')
    const providerLine = (all: string[], i: number) => all.findIndex((l) => l.includes(`"name":"huge-${String(i).padStart(7, '0')}"`))

    const broken: Array<[string, (all: string[]) => void, RegExp]> = [
      [
        'a provider whose parent is not in the snapshot',
        (all) => {
          const at = providerLine(all, PROVIDERS - 10)
          all[at] = all[at].replace('"parent_provider_uuid":null', '"parent_provider_uuid":"0fffffff-0000-4000-8000-000000000000"')
        },
        /provider 00000000-0000-4000-8000-0000000005d2 has parent 0fffffff-0000-4000-8000-000000000000, which is not in the snapshot/,
      ],
      [
        'a name twice',
        (all) => {
          const at = providerLine(all, PROVIDERS - 10)
          all[at] = all[at].replace(`"name":"huge-${String(PROVIDERS - 10).padStart(7, '0')}"`, '"name":"huge-0000001"')
        },
        /provider name huge-0000001 appears twice/,
      ],
      [
        'malformed JSON',
        (all) => {
          const at = providerLine(all, PROVIDERS - 10)
          all[at] = all[at].replace('"generation":1', '"generation":1,,')
        },
        /not valid JSON: providers\[1490\]: /,
      ],
      [
        'the file cut short',
        (all) => {
          all.splice(providerLine(all, PROVIDERS - 10))
        },
        /not valid JSON: unexpected end of the document/,
      ],
    ]

    it.each(broken)('%s', async (_what, breakIt, message) => {
      await generate(['--snapshot', snap, String(PROVIDERS), '--compact'])
      const all = lines()
      breakIt(all)
      fs.writeFileSync(snap, all.join('\n'))

      const empty = path.join(dir, 'empty.db')
      fs.rmSync(empty, {force: true})
      await newDb(empty)
      const before = dumpDb(empty)
      const r = await placemat(['import', snap, '--db', empty])
      expect(r.code, r.stderr).toBe(2)
      expect(r.stderr).toMatch(message)
      expect(dumpDb(empty)).toBe(before)

      const fresh = path.join(dir, 'fresh.db')
      const f = await placemat(['import', snap, '--db', fresh])
      expect(f.code).toBe(2)
      expect(fs.existsSync(fresh)).toBe(false)
    })
  })
})

describe.skipIf(!postgresAvailable)('import of a JSON snapshot into PostgreSQL', () => {
  it('round-trips, and a snapshot that goes wrong half way writes nothing', async () => {
    const server = await startPostgres()
    try {
      const snap = path.join(dir, 'pg.json')
      await generate(['--snapshot', snap, String(PROVIDERS), '--consumers', '10', '--compact'])
      const url = await server.database()
      const imp = await placemat(['import', snap, '--db', url])
      expect(imp.code, imp.stderr).toBe(0)
      expect(imp.stdout).toContain(`: ${PROVIDERS} providers, 10 consumers, 20 allocations,`)
      const exported = await placemat(['export', '--db', url, '--json'])
      expect(JSON.parse(exported.stdout)).toEqual(JSON.parse(fs.readFileSync(snap, 'utf8')))

      const busy = await placemat(['import', snap, '--db', url])
      expect(busy.code).toBe(4)

      const other = await server.database()
      fs.writeFileSync(snap, fs.readFileSync(snap, 'utf8').replace('"name":"huge-0001400"', '"name":"huge-0000003"'))
      const bad = await placemat(['import', snap, '--db', other])
      expect(bad.code, bad.stderr).toBe(2)
      expect(bad.stderr).toMatch(/provider name huge-0000003 appears twice/)
      const list = await placemat(['provider', 'list', '--db', other, '--json'])
      expect(JSON.parse(list.stdout).resource_providers).toEqual([])
    } finally {
      await server.stop()
    }
  })
})

describe('apply --db of a JSON file', () => {
  it('creates every provider in one transaction, and applying it again plans nothing', async () => {
    const file = path.join(dir, 'cloud.json')
    await generate(['--apply', file, String(PROVIDERS)])
    const db = path.join(dir, 'applied.db')
    await newDb(db)
    const r = await placemat(['apply', file, '--db', db])
    expect(r.code, r.stderr).toBe(0)
    // Four a provider, and one that keeps the names the file gives its aggregates.
    expect(r.stdout).toContain(`Applying ${PROVIDERS * 4 + 1} operations in one transaction...`)
    expect(r.stdout).toMatch(new RegExp(`Applied: ${PROVIDERS} created, 0 updated, 0 deleted \\(one transaction`))

    const {providers} = await onFile(db, (c) => c.get('/placemat/v1/providers'))
    expect(providers).toHaveLength(PROVIDERS)
    const p = providers.find((x: {name: string}) => x.name === 'huge-0000006')
    expect(p).toMatchObject({
      uuid: '00000000-0000-4000-8000-000000000006',
      inventories: {
        VCPU: {total: 32, max_unit: 16, min_unit: 1},
        MEMORY_MB: {total: 8192, min_unit: 128},
        DISK_GB: {total: 8192, min_unit: 5},
      },
    })
    expect([...p.traits].sort()).toEqual(['HW_CPU_X86_AVX2', 'HW_CPU_X86_SSE2', 'STORAGE_DISK_SSD'])
    expect([...p.aggregates].sort()).toEqual([
      '0a000000-0000-4000-8000-000000000001',
      '0a000000-0000-4000-8000-000000000002',
      '0a000000-0000-4000-8000-000000000003',
    ])

    const again = await placemat(['apply', file, '--db', db])
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout).toBe('No changes: everything in the file is up to date.\n')
  })

  it('refuses a file that goes wrong half way before writing anything (exit 2)', async () => {
    const file = path.join(dir, 'bad.json')
    await generate(['--apply', file, String(PROVIDERS)])
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('"name":"huge-0001000"', '"name":7'))
    const db = path.join(dir, 'bad.db')
    await newDb(db)
    const before = dumpDb(db)
    const r = await placemat(['apply', file, '--db', db])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/providers\[1000\]\.name: a name \(1-200 characters\) is required/)
    expect(dumpDb(db)).toBe(before)
  })
})
