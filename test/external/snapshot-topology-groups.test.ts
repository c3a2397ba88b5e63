/**
 * Snapshots carry what only placemat keeps: a cloud with rooms, rows and racks (from a layout
 * file), placement groups (affinity, anti-affinity, spread; hard and soft; with members), a
 * consumer moved away with claim move, names an apply file gave aggregates (one of them a rack's
 * aggregate, which listings name by the rack) and a host disabled with a reason, exported from a
 * --db file and from a daemon, imported into a new file, shows the same `topology show`, `group
 * list`, `group show`, `aggregate list` and `host show` (tables and JSON), and the moved consumer
 * is claimed again there as what it was. An import whose
 * allocations break a hard group is refused; plain Placement and `export --to-placement`
 * say on stderr what they cannot carry.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import YAML from 'yaml'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {startServer, type RunningServer} from '../../src/daemon/server.js'
import {mapLimit} from '../../src/client/map-limit.js'
import {placemat, type Result} from '../helpers/cli.js'
import {plainProxy} from '../helpers/claim-cloud.js'
import {placementAvailable, syncPlacementDatabase} from '../helpers/placement.js'
import {nodeUuid} from '../../src/core/topology.js'

const ok = (r: Result) => {
  expect(r.code, r.stderr).toBe(0)
  return r.stdout
}

// Names for aggregates: one the file maps to a uuid, one made from its name, and one given to
// rack k1's aggregate (listings name it by the rack; placemat keeps the name all the same).
const GPU = 'a0000000-0000-4000-8000-000000000001'
const HOSTS = `aggregates:
  gpu-pool: ${GPU}
  rack-one: ${nodeUuid('rack', 'k1')}
providers:
${[1, 2, 3, 4, 5, 6].map((i) => `  - {name: h${i}, inventories: {VCPU: 8, MEMORY_MB: 16384}${i <= 2 ? ', aggregates: [gpu-pool, fast]' : ''}}`).join('\n')}
`
const NAMES = [
  {name: 'fast', uuid: '35f56a5f-b7a1-5744-afa6-5213900abb11'},
  {name: 'gpu-pool', uuid: GPU},
  {name: 'rack-one', uuid: nodeUuid('rack', 'k1')},
]
// Two rooms; a row and a rack standing alone; an empty rack.
const LAYOUT = `rooms:
  - name: m1
    rows:
      - name: r1
        racks: [{name: k1, hosts: [h1]}, {name: k2, hosts: [h2]}]
      - name: r2
        racks: [{name: k3, hosts: [h3]}]
  - name: m2
    rows:
      - name: r3
        racks: [{name: k4, hosts: [h4]}]
rows:
  - name: rx
    racks: [{name: k5, hosts: [h5]}]
racks:
  - name: spare
    hosts: [h6]
  - name: empty
    hosts: []
`
const C = (n: number) => `c0000000-0000-4000-8000-${String(n).padStart(12, '0')}`
const OWN = ['--project', 'p', '--user', 'u']
const GROUPS = ['anti', 'near', 'spread', 'soft-apart']

let dir: string
let source: string
let server: RunningServer
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-snap-own-'))
  source = path.join(dir, 'source.db')
  const db = ['--db', source]
  fs.writeFileSync(path.join(dir, 'hosts.yaml'), HOSTS)
  fs.writeFileSync(path.join(dir, 'layout.yaml'), LAYOUT)
  ok(await placemat(['db', 'init', ...db]))
  ok(await placemat(['apply', path.join(dir, 'hosts.yaml'), ...db]))
  ok(await placemat(['topology', 'apply', path.join(dir, 'layout.yaml'), ...db]))
  ok(await placemat(['group', 'create', 'anti', '--policy', 'anti-affinity', '--level', 'rack', ...db]))
  ok(await placemat(['group', 'create', 'near', '--policy', 'affinity', '--level', 'room', ...db]))
  ok(await placemat(['group', 'create', 'spread', '--policy', 'spread', '--max-skew', '2', '--level', 'row', ...db]))
  ok(await placemat(['group', 'create', 'soft-apart', '--policy', 'anti-affinity', '--level', 'room', '--soft', ...db]))
  // Members placed by claims that keep the hard rules; a soft group broken (two members in room m1).
  ok(await placemat(['claim', C(1), '--group', 'anti', '--resources', 'VCPU:1', '--in-tree', 'h1', ...OWN, ...db]))
  ok(await placemat(['claim', C(2), '--group', 'anti', '--resources', 'VCPU:1', '--in-tree', 'h2', ...OWN, ...db]))
  ok(await placemat(['claim', C(3), '--group', 'near', '--resources', 'VCPU:1', '--in-tree', 'h3', ...OWN, ...db]))
  ok(await placemat(['group', 'add', 'near', C(1), ...db]))
  ok(await placemat(['group', 'add', 'spread', C(1), C(4), ...db]))
  ok(await placemat(['group', 'add', 'soft-apart', C(1), C(3), '--allow-violations', ...db]))
  // c5 gives its allocations to c6 and holds nothing: placemat keeps what it was.
  ok(
    await placemat([
      'claim',
      C(5),
      '--resources',
      'VCPU:2',
      '--in-tree',
      'h4',
      '--consumer-type',
      'INSTANCE',
      '--project',
      'p5',
      '--user',
      'u5',
      ...db,
    ]),
  )
  ok(await placemat(['claim', 'move', C(5), '--to', C(6), ...db]))
  ok(await placemat(['host', 'disable', 'h6', '--reason', 'fan failure: ticket 42', ...db]))
  const served = path.join(dir, 'served.db')
  fs.copyFileSync(source, served)
  server = await startServer({db: served, host: '127.0.0.1', port: 0, auth: 'noauth2'})
}, 120_000)
afterAll(async () => {
  await server?.close()
  if (dir) fs.rmSync(dir, {recursive: true, force: true})
})

/** What an operator reads of the topology, the groups, hosts' aggregates and status, as tables and as JSON. */
async function views(target: string[]): Promise<Record<string, string>> {
  const commands = [['topology', 'show'], ['group', 'list'], ...GROUPS.map((g) => ['group', 'show', g]), ['host', 'show', 'h6']].flatMap(
    (c) => [c, [...c, '--json']],
  )
  // A host's aggregates in the order they were stored differ on the copy (a snapshot sorts them): by uuid.
  commands.push(...['h1', 'h2', 'h3'].map((h) => ['aggregate', 'list', h, '--sort-column', 'aggregate']))
  const outputs = await mapLimit(commands, 4, async (c) => ok(await placemat([...c, ...target])))
  return Object.fromEntries(commands.map((c, i) => [c.join(' '), outputs[i]]))
}

describe('export then import into a new file: the topology and the groups as they were', () => {
  const sources = () => ({db: ['--db', source], daemon: ['--url', server.url, '--token', 'admin']})
  for (const [name, format] of [
    ['db', 'yaml'],
    ['daemon', 'json'],
  ] as const) {
    it(`from a ${name === 'db' ? '--db file' : 'daemon'} (${format})`, async () => {
      const from = sources()[name]
      const snapFile = path.join(dir, `snap-${name}.${format}`)
      const exported = await placemat(['export', ...from, ...(format === 'json' ? ['--json'] : []), '-o', snapFile])
      expect(exported.code, exported.stderr).toBe(0)
      const snap = format === 'json' ? JSON.parse(fs.readFileSync(snapFile, 'utf8')) : YAML.parse(fs.readFileSync(snapFile, 'utf8'))
      expect(exported.stderr).toBe(`wrote ${snap.providers.length} providers, ${snap.consumers.length} consumers to ${snapFile}\n`)
      expect(snap.placemat_snapshot).toBe(2)
      expect(snap.topology.nodes).toContainEqual({level: 'rack', name: 'k5', parent: 'rx'})
      expect(snap.groups.map((g: any) => g.name)).toEqual(['anti', 'near', 'soft-apart', 'spread'])
      expect(snap.moved_consumers).toMatchObject([{uuid: C(5), moved_to: C(6), project_id: 'p5', user_id: 'u5', consumer_type: 'INSTANCE'}])
      expect(snap.aggregate_names).toEqual(NAMES)
      expect(snap.providers.filter((p: any) => 'disabled_reason' in p).map((p: any) => [p.name, p.disabled_reason])).toEqual([
        ['h6', 'fan failure: ticket 42'],
      ])

      const target = path.join(dir, `imported-${name}.db`)
      const imp = await placemat(['import', snapFile, '--db', target])
      expect(imp.stdout).toBe(
        `imported into ${target}: 6 providers, 4 consumers, 4 allocations, 0 custom classes, 0 custom traits, 13 racks/rows/rooms, 4 placement groups, 1 moved consumers, 3 aggregate names, 1 disabled hosts' reasons\n`,
      )
      const [before, after] = await Promise.all([views(from), views(['--db', target])])
      expect(after).toEqual(before)
      expect(before['aggregate list h1 --sort-column aggregate']).toMatch(/^35f56a5f-b7a1-5744-afa6-5213900abb11\s+fast$/m)
      expect(before['host show h6']).toMatch(/^reason\s+fan failure: ticket 42$/m)
      // The soft group's breach came along as it was; the hard groups hold.
      expect(before['group list']).toMatch(/^soft-apart\s.*no \(1 breach\)/m)
      // And the new file exports the same snapshot again.
      const again = await placemat(['export', '--db', target, ...(format === 'json' ? ['--json'] : [])])
      expect(again.stdout).toBe(fs.readFileSync(snapFile, 'utf8'))
      // The copy knows what c5 was: claimed again without --project/--user, it is p5/u5's INSTANCE.
      ok(await placemat(['claim', C(5), '--resources', 'VCPU:1', '--in-tree', 'h5', '--db', target]))
      expect(JSON.parse(ok(await placemat(['claim', 'show', C(5), '--json', '--db', target])))).toMatchObject({
        project_id: 'p5',
        user_id: 'u5',
        consumer_type: 'INSTANCE',
      })
    }, 120_000)
  }
})

describe('import refuses what would break a hard group', () => {
  it("a snapshot whose allocations break a hard group's rule: exit 4 naming it, nothing written; --allow-violations imports it", async () => {
    const snap = YAML.parse(ok(await placemat(['export', '--db', source])))
    // c1 (h1, room m1) and c3 (h3, room m1) in a hard anti-affinity group by room.
    snap.groups.push({name: 'apart', policy: 'anti-affinity', level: 'room', soft: false, generation: 1, members: [C(1), C(3)]})
    const text = YAML.stringify(snap)
    const target = path.join(dir, 'broken.db')
    const r = await placemat(['import', '-', '--db', target], {input: text})
    expect(r.code).toBe(4)
    expect(r.stderr).toBe(
      `placemat: -: the snapshot's allocations break placement group rules: group apart (anti-affinity by room): 2 members in room m1 (at most 1) [m1: ${C(1)}, ${C(3)}]; ` +
        'nothing imported (--allow-violations imports the groups as they are, and placemat audit reports them)\n',
    )
    expect(fs.existsSync(target)).toBe(false)
    const allowed = await placemat(['import', '-', '--db', target, '--allow-violations'], {input: text})
    expect(allowed.code, allowed.stderr).toBe(0)
    expect(ok(await placemat(['group', 'list', '--db', target]))).toMatch(/^apart\s.*no \(1 breach\)/m)
  })

  it('a group, topology, aggregate name or disabled reason that does not hold together: exit 2', async () => {
    const snap = YAML.parse(ok(await placemat(['export', '--db', source])))
    const cases: Array<[(s: any) => void, RegExp]> = [
      [
        (s) => s.topology.nodes.push({level: 'rack', name: 'k9', parent: 'nowhere'}),
        /rack k9 is in row nowhere, which is not in the snapshot/,
      ],
      [(s) => s.topology.nodes.push({level: 'row', name: 'r1', parent: null}), /row r1 appears twice/],
      [(s) => (s.groups[0].policy = 'together'), /group anti: policy must be one of/],
      [(s) => s.groups.push(s.groups[0]), /group anti appears twice/],
      [(s) => (s.placemat_snapshot = 3), /a snapshot of version 3, written by a newer placemat/],
      [(s) => s.aggregate_names.push({name: 'fast', uuid: GPU.replace('1', '2')}), /aggregate name fast appears twice/],
      [(s) => s.aggregate_names.push({name: 'slow', uuid: GPU}), new RegExp(`aggregate ${GPU} is named twice`)],
      [(s) => s.aggregate_names.push({name: GPU, uuid: GPU.replace('1', '2')}), /an aggregate name cannot be a uuid/],
      [
        (s) => (s.providers.find((p: any) => p.name === 'h5').disabled_reason = 'why'),
        /disabled_reason is for a host \(a root provider\) with COMPUTE_STATUS_DISABLED/,
      ],
      [(s) => (s.providers.find((p: any) => p.name === 'h6').disabled_reason = 7), /disabled_reason must be a text/],
    ]
    for (const [change, message] of cases) {
      const bad = structuredClone(snap)
      change(bad)
      const r = await placemat(['import', '-', '--db', path.join(dir, 'never.db')], {input: YAML.stringify(bad)})
      expect(r.code, r.stderr).toBe(2)
      expect(r.stderr).toMatch(message)
    }
  })
})

describe('what cannot be carried is said', () => {
  it('plain OpenStack Placement keeps no topology, groups, aggregate names or disabled reasons: export says so on stderr and writes a version 1 snapshot', async () => {
    const proxy = await plainProxy(server.url)
    try {
      const r = await placemat(['export', '--url', proxy.url, '--token', 'admin'])
      expect(r.code, r.stderr).toBe(0)
      expect(r.stderr).toMatch(
        /^placemat: warning: this endpoint is plain OpenStack Placement, which keeps no racks, rows, rooms, placement groups, aggregate names or reasons hosts are disabled: the snapshot has none/,
      )
      const snap = YAML.parse(r.stdout)
      expect(snap.placemat_snapshot).toBe(1)
      expect(snap.topology).toBeUndefined()
      expect(snap.groups).toBeUndefined()
      expect(snap.aggregate_names).toBeUndefined()
      // The trait that takes h6 out of service is Placement's and comes along; the reason does not.
      const h6 = snap.providers.find((p: any) => p.name === 'h6')
      expect(h6.traits).toContain('COMPUTE_STATUS_DISABLED')
      expect(h6.disabled_reason).toBeUndefined()
    } finally {
      await proxy.close()
    }
  })

  it.skipIf(!placementAvailable)(
    'export --to-placement says what it leaves out',
    async () => {
      const file = path.join(dir, 'placement.db')
      await syncPlacementDatabase(`sqlite:///${file}`)
      const r = await placemat(['export', '--db', source, '--to-placement', `sqlite:///${file}`], {env: {PLACEMAT_HOME: dir}})
      expect(r.code, r.stderr).toBe(0)
      expect(r.stderr).toBe(
        'placemat: warning: not written into Placement, which has no place for them: 2 rooms, 4 rows and 7 racks ' +
          "(their names; the hosts' rack, row and room aggregates are kept), 4 placement groups (8 members), " +
          '1 moved consumers (the project, user and type of consumers that gave their allocations away with claim move), ' +
          '3 aggregate names (given by apply files; the aggregates are kept) and 1 reasons hosts are disabled (COMPUTE_STATUS_DISABLED is kept)\n',
      )
    },
    60_000,
  )
})
