/**
 * `placemat capacity` on the README's datacenter (fixtures/cloud.yaml with its layout) and five
 * Nova flavors (fixtures/flavors.json, as `openstack flavor list --long -f json` prints them):
 * the same counts on a --db file, a daemon and a plain Placement; bad input refused with exit 2.
 */
import fs from 'node:fs'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {ROOT, placemat as run} from '../helpers/db-tools.js'
import {newDb, startEndpoints, stopEndpoints, type Endpoints} from '../helpers/endpoints.js'

const CLOUD = path.join(ROOT, 'fixtures', 'cloud.yaml')
const LAYOUT = path.join(ROOT, 'fixtures', 'cloud-layout.yaml')
const FLAVORS = path.join(ROOT, 'fixtures', 'flavors.json')

describe('placemat capacity', () => {
  let e: Endpoints
  let db: string
  beforeAll(async () => {
    e = await startEndpoints('placemat-capacity-')
    db = path.join(e.dir, 'cli.db')
    await newDb(db)
    for (const target of [['--db', db], e.daemon, e.plain]) {
      const applied = await run(['apply', CLOUD, ...target])
      expect(applied.code, applied.stderr).toBe(0)
    }
    for (const target of [['--db', db], e.daemon]) expect((await run(['topology', 'apply', LAYOUT, ...target])).code).toBe(0)
  })
  afterAll(() => stopEndpoints(e))

  it('counts each flavor per rack, row, room and the cloud; the racks add up to their room', async () => {
    const r = await run(['capacity', '--flavors', FLAVORS, '--db', db, '--json'])
    expect(r.code, r.stderr).toBe(0)
    const answer = JSON.parse(r.stdout)
    console.log(`capacity of the README's datacenter:\n${(await run(['capacity', '--flavors', FLAVORS, '--db', db, '--level', 'rack', '--level', 'row', '--level', 'room'])).stdout}`)
    const at = (level: string, flavor: string) => answer.domains.filter((d: any) => d.level === level && d.flavor === flavor)
    for (const flavor of ['m1.small', 'm1.large', 'c1.pinned', 'n1.sriov', 'x1.huge']) {
      const racks = at('rack', flavor)
      expect(racks.map((d: any) => d.name)).toEqual(['rack-a1', 'rack-a2', 'rack-b1'])
      const sum = racks.reduce((n: number, d: any) => n + d.fit, 0)
      expect(at('room', flavor)[0].fit, flavor).toBe(sum)
      expect(at('cloud', flavor)[0].fit).toBe(sum)
      expect(at('host', flavor).reduce((n: number, d: any) => n + d.fit, 0)).toBeGreaterThanOrEqual(sum) // each pool once per domain
    }
    expect(at('cloud', 'm1.small')[0].fit).toBeGreaterThan(0)
    expect(at('cloud', 'x1.huge')[0].fit).toBe(0)
    expect(answer.lint).toEqual([{flavor: 'x1.huge', problem: "VCPU:256 is above every provider's max_unit or capacity"}])
    expect(answer.warnings).toEqual([{flavor: 'c1.pinned', warning: 'hw:numa_nodes: judged by Nova outside Placement, not modelled'}])
    expect(r.stderr).toBe('warning: flavor c1.pinned: hw:numa_nodes: judged by Nova outside Placement, not modelled\n')
  })

  it('gives the same hosts and cloud on a daemon and on a plain Placement', async () => {
    const counts = async (target: string[]) => {
      const r = await run(['capacity', '--flavors', FLAVORS, '--level', 'host', '--level', 'cloud', '--json', ...target])
      expect(r.code, r.stderr).toBe(0)
      return JSON.parse(r.stdout).domains
    }
    const file = await counts(['--db', db])
    const rows = (list: any[]) => list.map((d) => `${d.level} ${d.name} ${d.flavor} ${d.fit} ${d.pooled} ${d.disabled_fit}`)
    expect(rows(await counts(e.daemon))).toEqual(rows(file))
    expect(rows(await counts(e.plain))).toEqual(rows(file))
  })

  it('prints every row with every column for scripts', async () => {
    const r = await run(['capacity', '--flavors', FLAVORS, '--db', db, '--flavor', 'm1.large', '--level', 'rack', '-f', 'value'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout.trim().split('\n').map((l) => l.split(' ').length)).toEqual([7, 7, 7])
  })

  it('refuses bad input with exit 2, naming the reason', async () => {
    const broken = path.join(e.dir, 'broken.json')
    fs.writeFileSync(broken, '[{"Name": "a",\n  "RAM": }]')
    const cases: Array<[string[], string]> = [
      [['--flavors', broken], `${broken}:2:10: Unexpected token`],
      [['--flavors', FLAVORS, '--flavor', 'm9.nope'], 'no flavor named m9.nope in the flavor file; it has m1.small, m1.large, c1.pinned, n1.sriov, x1.huge'],
      [['--flavors', path.join(e.dir, 'missing.json')], 'cannot read the flavor file'],
      [['--flavors', FLAVORS, '--level', 'aisle'], 'Expected --level=aisle to be one of'],
    ]
    for (const [args, text] of cases) {
      const r = await run(['capacity', ...args, '--db', db])
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2)
      expect(r.stderr).toContain(text)
      expect(r.stdout).toBe('')
    }
  })
})
