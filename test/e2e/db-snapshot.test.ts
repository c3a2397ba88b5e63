/**
 * Snapshots: `placemat export` (public API only, any endpoint) -> `placemat import`
 * (straight through the store, generations kept) -> `placemat export` gives the same text;
 * a daemon and a file holding the same state export the same; import refuses a file that
 * is not empty and a snapshot that does not hold together.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import YAML from 'yaml'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {startServer, type RunningServer} from '../../src/daemon/server.js'
import {dumpDb, placemat, ROOT} from '../helpers/db-tools.js'

const FIXTURE = path.join(ROOT, 'fixtures/db/schema-0001.db')

let dir: string
let source: string
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-snap-'))
  source = path.join(dir, 'source.db')
  fs.copyFileSync(FIXTURE, source)
  // Bring the copy to the current schema (a no-op while 0001 is the newest).
  const up = await placemat(['db', 'upgrade', '--db', source, '--no-backup'])
  expect(up.code, up.stderr).toBe(0)
})
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

describe('export -> import -> export', () => {
  it('export -o FILE.json writes JSON, which import reads; --yaml keeps YAML', async () => {
    const file = path.join(dir, 'cloud.json')
    const out = await placemat(['export', '--db', source, '-o', file])
    expect(out.code, out.stderr).toBe(0)
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).providers).toHaveLength(6)
    const imp = await placemat(['import', file, '--db', path.join(dir, 'from-json.db')])
    expect(imp.code, imp.stderr).toBe(0)
    const yaml = path.join(dir, 'kept.json')
    expect((await placemat(['export', '--db', source, '-o', yaml, '--yaml'])).code).toBe(0)
    expect(YAML.parse(fs.readFileSync(yaml, 'utf8')).providers).toHaveLength(6)
    expect(fs.readFileSync(yaml, 'utf8').trimStart().startsWith('{')).toBe(false)
  })

  for (const format of ['yaml', 'json'] as const) {
    it(`gives the same ${format}`, async () => {
      const flags = format === 'json' ? ['--json'] : []
      const first = await placemat(['export', '--db', source, ...flags])
      expect(first.code, first.stderr).toBe(0)
      const snapFile = path.join(dir, `snap.${format}`)
      fs.writeFileSync(snapFile, first.stdout)

      const target = path.join(dir, `imported-${format}.db`)
      const imp = await placemat(['import', snapFile, '--db', target])
      expect(imp.code, imp.stderr).toBe(0)
      expect(imp.stdout).toBe(`imported into ${target}: 6 providers, 5 consumers, 13 allocations, 1 custom classes, 2 custom traits\n`)

      const second = await placemat(['export', '--db', target, ...flags])
      expect(second.code, second.stderr).toBe(0)
      expect(second.stdout).toBe(first.stdout)

      const snap = format === 'json' ? JSON.parse(first.stdout) : YAML.parse(first.stdout)
      // Generations exactly as they were (the API would have moved them).
      expect(snap.providers.find((p: any) => p.name === 'cn1').generation).toBe(5)
      expect(snap.consumers.find((c: any) => c.uuid === '11111111-0000-4000-8000-000000000003')).toMatchObject({
        generation: 2,
        consumer_type: null,
      })
      // The tree, traits, aggregates, custom classes and types all made it.
      expect(snap.providers.find((p: any) => p.name === 'cn1_numa0_pgpu0').parent_provider_uuid).toBe(
        'c0000001-0000-4000-8000-000000000010',
      )
      expect(snap.resource_classes).toEqual(['CUSTOM_FPGA_SLOT'])
      expect(snap.traits).toEqual(['CUSTOM_RACK_A1', 'CUSTOM_UNUSED_TRAIT'])
    })
  }

  it('a daemon exports the same as the file it serves, and the export from it imports the same', async () => {
    const served = path.join(dir, 'served.db')
    fs.copyFileSync(source, served)
    const server: RunningServer = await startServer({db: served, host: '127.0.0.1', port: 0, auth: 'noauth2'})
    try {
      const online = await placemat(['export', '--url', server.url, '--token', 'admin'])
      expect(online.code, online.stderr).toBe(0)
      const offline = await placemat(['export', '--db', source])
      expect(online.stdout).toBe(offline.stdout)
      const target = path.join(dir, 'from-daemon.db')
      expect((await placemat(['import', '-', '--db', target], {input: online.stdout})).code).toBe(0)
      expect((await placemat(['export', '--db', target])).stdout).toBe(online.stdout)
    } finally {
      await server.close()
    }
  })
})

describe('placemat import refuses', () => {
  it('a file that is not empty (exit 4, nothing written)', async () => {
    const target = path.join(dir, 'busy.db')
    fs.copyFileSync(source, target)
    const before = dumpDb(target)
    const snap = (await placemat(['export', '--db', source])).stdout
    const r = await placemat(['import', '-', '--db', target], {input: snap})
    expect(r.code).toBe(4)
    expect(r.stderr).toMatch(
      /is not empty \(6 providers, 5 consumers, 1 custom classes, 2 custom traits\); import only into a new or empty file/,
    )
    expect(dumpDb(target)).toBe(before)
  })

  it('a snapshot whose references do not hold (exit 2, no file written)', async () => {
    const snap = YAML.parse((await placemat(['export', '--db', source])).stdout)
    snap.providers = snap.providers.filter((p: any) => p.name !== 'cn1_numa0')
    const target = path.join(dir, 'never.db')
    const r = await placemat(['import', '-', '--db', target], {input: YAML.stringify(snap)})
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(
      /provider c0000001-0000-4000-8000-000000000100 has parent c0000001-0000-4000-8000-000000000010, which is not in the snapshot/,
    )
    expect(fs.existsSync(target)).toBe(false)
    const notSnap = await placemat(['import', '-', '--db', target], {input: 'moves: []\n'})
    expect(notSnap.code).toBe(2)
    expect(notSnap.stderr).toMatch(/not a placemat snapshot/)
  })
})
