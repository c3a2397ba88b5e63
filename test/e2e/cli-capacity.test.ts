/**
 * `placemat capacity` on the example datacenter of docs/cli/capacity.md (fixtures/cloud.yaml with
 * its layout) and five Nova flavors (fixtures/flavors.json, as `openstack flavor list --long -f
 * json` prints them): the same counts on a --db file, a daemon and a plain Placement; bad input refused with exit 2.
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
    console.log(
      `capacity of the example datacenter:\n${(await run(['capacity', '--flavors', FLAVORS, '--db', db, '--level', 'rack', '--level', 'row', '--level', 'room'])).stdout}`,
    )
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

  it('prints a summary first (the cloud and rooms, flavors as columns, what binds), --long rows, and N+1 in one call', async () => {
    const summary = await run(['capacity', '--flavors', FLAVORS, '--db', db])
    expect(summary.code, summary.stderr).toBe(0)
    const lines = summary.stdout.split('\n')
    expect(lines[0].split(/\s+/)).toEqual(['LEVEL', 'NAME', 'M1.SMALL', 'M1.LARGE', 'C1.PINNED', 'N1.SRIOV', 'X1.HUGE'])
    expect(lines.slice(1, 3).map((l) => l.split(/\s+/).slice(0, 2))).toEqual([
      ['room', 'room-1'],
      ['cloud', 'cloud'],
    ])
    expect(lines[2]).toMatch(/^cloud\s+cloud\s+\d+ \S+/)
    const long = await run([
      'capacity',
      '--flavors',
      FLAVORS,
      '--db',
      db,
      '--long',
      '--level',
      'cloud',
      '-f',
      'value',
      '-c',
      'flavor,binding',
    ])
    expect(long.stdout.split('\n')[0]).toMatch(/^m1\.small [A-Z_]+(@\S+)?$/)
    // N+1: the same table on the file and on the daemon.
    const each = async (target: string[]) => {
      const r = await run(['capacity', '--flavors', FLAVORS, '--without-each', 'rack', '--json', ...target])
      expect(r.code, r.stderr).toBe(0)
      return JSON.parse(r.stdout)
    }
    const file = await each(['--db', db])
    expect(file.losses.map((l: any) => l.name)).toEqual(['rack-a1', 'rack-a2', 'rack-b1'])
    expect(Object.keys(file.worst)).toEqual(['m1.small', 'm1.large', 'c1.pinned', 'n1.sriov', 'x1.huge'])
    expect(await each(e.daemon)).toEqual(file)
    const table = await run(['capacity', '--flavors', FLAVORS, '--without-each', 'rack', '--db', db])
    expect(table.stdout).toMatch(/^LOST\s+HOSTS\s+DISPLACED\s+UNPLACED\s+SURVIVES\s+M1\.SMALL/)
    expect(table.stdout).toMatch(/\nworst\s+(yes|NO)\s+\d+/)
    const bad = await run(['capacity', '--flavors', FLAVORS, '--without-each', 'aisle', '--db', db])
    expect(bad.code).toBe(2)
    // A flavor mix: the same on the file and the daemon, each domain's fit the sum of its flavors'.
    const mixed = async (target: string[]) => {
      const r = await run(['capacity', '--flavors', FLAVORS, '--mix', 'm1.large=60,m1.small=30,n1.sriov=10', '--json', ...target])
      expect(r.code, r.stderr).toBe(0)
      return JSON.parse(r.stdout)
    }
    const mix = await mixed(['--db', db])
    expect(await mixed(e.daemon)).toEqual(mix)
    for (const d of mix.domains) expect(d.fit).toBe(Object.values(d.by_flavor as Record<string, number>).reduce((a, b) => a + b, 0))
    expect(mix.domains.find((d: any) => d.level === 'cloud').fit).toBeGreaterThan(0)
    const unknown = await run(['capacity', '--flavors', FLAVORS, '--mix', 'm9=1', '--db', db])
    expect([unknown.code, unknown.stderr]).toEqual([
      2,
      'placemat: --mix: No flavor named m9 in the catalog; it has m1.small, m1.large, c1.pinned, n1.sriov, x1.huge.\n',
    ])
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

  it("shows in top each rack's fit for a flavor, fullest first", async () => {
    const r = await run(['top', '--once', '--flavors', FLAVORS, '--flavor', 'm1.large', '--db', db])
    expect(r.code, r.stderr).toBe(0)
    const lines = r.stdout.split('\n')
    const at = lines.indexOf('RACKS BY FIT FOR m1.large (fullest first)')
    expect(at, r.stdout).toBeGreaterThan(0)
    expect(lines.slice(at + 1, at + 4).map((l) => l.replace(/\s+/g, ' ').trim())).toEqual([
      'room-1/row-2/rack-a2 fit 16 (16 if it were one host)',
      'room-1/row-1/rack-a1 fit 92 (94 if it were one host)',
      'room-1/row-3/rack-b1 fit 92 (94 if it were one host)',
    ])
    const frame = JSON.parse((await run(['top', '--once', '--json', '--flavors', FLAVORS, '--flavor', 'm1.large', '--db', db])).stdout)
    expect(frame.capacity.racks.map((x: any) => x.fit)).toEqual([16, 92, 92])
  })

  it('prints every row with every column for scripts', async () => {
    const r = await run(['capacity', '--flavors', FLAVORS, '--db', db, '--flavor', 'm1.large', '--level', 'rack', '-f', 'value'])
    expect(r.code, r.stderr).toBe(0)
    expect(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => l.split(' ').length),
    ).toEqual([8, 8, 8])
  })

  it('refuses bad input with exit 2, naming the reason', async () => {
    const broken = path.join(e.dir, 'broken.json')
    fs.writeFileSync(broken, '[{"Name": "a",\n  "RAM": }]')
    const cases: Array<[string[], string]> = [
      [['--flavors', broken], `${broken}:2:10: Unexpected token`],
      [
        ['--flavors', FLAVORS, '--flavor', 'm9.nope'],
        'no flavor named m9.nope in the flavor file; it has m1.small, m1.large, c1.pinned, n1.sriov, x1.huge',
      ],
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

  it('places again what a lost rack held, and says when a group cannot survive it', async () => {
    const db2 = path.join(e.dir, 'what-if.db')
    fs.copyFileSync(db, db2)
    const ok = async (args: string[]) => {
      const r = await run([...args, '--db', db2])
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0)
      return r
    }
    const web = (i: number) => `11111111-0000-4000-8000-00000000000${i}`
    await ok([
      'claim',
      web(0).slice(0, -1),
      '--count',
      '3',
      '--spread',
      'rack',
      '--resources',
      'VCPU:2,MEMORY_MB:2048,DISK_GB:10',
      '--project',
      'p',
      '--user',
      'u',
    ])
    await ok([
      'claim',
      '22222222-0000-4000-8000-000000000001',
      '--resources',
      'VCPU:2,MEMORY_MB:2048,DISK_GB:10',
      '--project',
      'p',
      '--user',
      'u',
    ])
    await ok([
      'group',
      'create',
      'web',
      '--policy',
      'anti-affinity',
      '--level',
      'rack',
      '--member',
      web(1),
      '--member',
      web(2),
      '--member',
      web(3),
    ])
    const before = JSON.parse((await ok(['capacity', '--flavors', FLAVORS, '--level', 'cloud', '--json'])).stdout)
    // One more member of web: every rack holds one already.
    const web1 = JSON.parse((await ok(['capacity', '--flavors', FLAVORS, '--flavor', 'm1.small', '--group', 'web', '--json'])).stdout)
    expect(web1.domains.filter((d: any) => d.level !== 'host').map((d: any) => d.fit)).toEqual(
      web1.domains.filter((d: any) => d.level !== 'host').map(() => 0),
    )
    await ok(['group', 'create', 'pairs', '--policy', 'max-per', '--max-per', '2', '--level', 'rack'])
    const pairs = JSON.parse(
      (
        await ok([
          'capacity',
          '--flavors',
          FLAVORS,
          '--flavor',
          'm1.small',
          '--group',
          'pairs',
          '--level',
          'rack',
          '--level',
          'cloud',
          '--json',
        ])
      ).stdout,
    )
    expect(pairs.domains.map((d: any) => `${d.name} ${d.fit}`)).toEqual(['rack-a1 2', 'rack-a2 2', 'rack-b1 2', 'cloud 6'])
    const noGroup = await run(['capacity', '--flavors', FLAVORS, '--group', 'nope', '--db', db2])
    expect(noGroup.code).toBe(3)
    const r = await ok(['capacity', '--flavors', FLAVORS, '--level', 'rack', '--level', 'cloud', '--without', 'rack:rack-a1', '--json'])
    const w = JSON.parse(r.stdout)
    console.log(`capacity --without rack:rack-a1: ${JSON.stringify(w.what_if, null, 1)}`)
    expect(w.what_if.survives).toBe(false)
    const displaced = Object.fromEntries(w.what_if.displaced.map((d: any) => [d.consumer, d]))
    expect(displaced[web(1)]).toMatchObject({from: ['cmp-a01'], to: null})
    expect(displaced[web(1)].why).toContain('group web (anti-affinity by rack)')
    // Its disk stays on the shared pool, which `to` names after the host.
    expect(displaced['22222222-0000-4000-8000-000000000001']).toMatchObject({from: ['cmp-a01'], to: ['cmp-a03', 'ceph-rack-a']})
    expect(w.domains.map((d: any) => d.name)).not.toContain('rack-a1')
    const cloud = (a: any, flavor: string) => a.domains.find((d: any) => d.level === 'cloud' && d.flavor === flavor).fit
    expect(cloud(w, 'm1.small')).toBeLessThan(cloud(before, 'm1.small'))
    // Nothing of it reached the cloud.
    expect(JSON.parse((await ok(['capacity', '--flavors', FLAVORS, '--level', 'cloud', '--json'])).stdout)).toEqual(before)
    // --long: before, after and the change side by side.
    const sideBySide = await ok([
      'capacity',
      '--flavors',
      FLAVORS,
      '--without',
      'rack:rack-a1',
      '--long',
      '--level',
      'cloud',
      '-f',
      'value',
      '-c',
      'flavor,before,after,change',
    ])
    const smallRow = sideBySide.stdout
      .split('\n')
      .find((l) => l.startsWith('m1.small '))!
      .split(' ')
      .map(Number)
    expect(smallRow.slice(1)).toEqual([cloud(before, 'm1.small'), cloud(w, 'm1.small'), cloud(w, 'm1.small') - cloud(before, 'm1.small')])
    for (const [args, text] of [
      [['--without', 'rack:nope'], 'No rack named nope with hosts'],
      [['--without', 'aisle:a'], '--without aisle:a: host:NAME, rack:NAME, row:NAME or room:NAME expected'],
      [['--ratio', 'VCPU=0'], '--ratio VCPU=0: CLASS=R expected, with R a number above 0'],
      [['--ratio', 'VCPU=-2'], '--ratio VCPU=-2: CLASS=R expected'],
    ] as Array<[string[], string]>) {
      const bad = await run(['capacity', '--flavors', FLAVORS, ...args, '--db', db2])
      expect(bad.code, bad.stderr).toBe(2)
      expect(bad.stderr).toContain(text)
    }
    // Hosts of a shape added to an existing rack: its fit grows by what one such host holds.
    const add = path.join(e.dir, 'add.yaml')
    fs.writeFileSync(
      add,
      'providers:\n  - name: cmp-new\n    inventories: {VCPU: 64, MEMORY_MB: 262144, DISK_GB: 1000}\nracks:\n  - name: rack-a2\n    hosts: [cmp-new]\n',
    )
    const rackA2 = (a: any) => a.domains.find((d: any) => d.level === 'rack' && d.name === 'rack-a2').fit
    const small = ['capacity', '--flavors', FLAVORS, '--flavor', 'm1.small', '--level', 'rack', '--json']
    const plain = JSON.parse((await ok(small)).stdout)
    const added = JSON.parse((await ok([...small, '--add', add])).stdout)
    expect(rackA2(added) - rackA2(plain)).toBe(50) // DISK_GB 1000 / 20
    expect(added.what_if).toMatchObject({added: ['cmp-new'], displaced: [], survives: true})
    fs.writeFileSync(add, 'providers:\n  - name: cmp-new\nracks:\n  - name: rack-zz\n    hosts: [cmp-new]\n')
    const noRack = await run([...small, '--add', add, '--db', db2])
    expect(noRack.code).toBe(2)
    expect(noRack.stderr).toContain('No rack named rack-zz')
    fs.writeFileSync(add, '')
    const empty = await run([...small, '--add', add, '--db', db2])
    expect(empty.code).toBe(2)
    expect(empty.stderr).toContain(`--add ${add}: no hosts to add`)
    const ratio = JSON.parse(
      (await ok(['capacity', '--flavors', FLAVORS, '--flavor', 'm1.small', '--level', 'cloud', '--ratio', 'VCPU=32', '--json'])).stdout,
    )
    expect(cloud(ratio, 'm1.small')).toBeGreaterThanOrEqual(cloud(before, 'm1.small'))
    expect(ratio.what_if).toMatchObject({displaced: [], survives: true, ratios: {VCPU: 32}, added: []})
  })
})
