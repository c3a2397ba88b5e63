/**
 * `placemat topology apply/show/layout` and the rack/row/room commands on the real binary:
 * on a SQLite file (--db), on a daemon (startServer, port 0, noauth2, --token admin) and
 * on a plain Placement stand-in (the daemon behind a proxy that answers 404 under
 * /placemat/, so the CLI works client-side). All must end in the same aggregates.
 */
import fs from 'node:fs'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import YAML from 'yaml'
import {PlacementClient} from '../../src/client/client.js'
import {HttpTransport} from '../../src/client/transports.js'
import {nodeUuid, type Layout} from '../../src/core/topology.js'
import type {RunningServer} from '../../src/daemon/server.js'
import {ROOT, placemat as run, script, type Result} from '../helpers/db-tools.js'
import {newDb, onFile, serverIn, startEndpoints, stopEndpoints, type Endpoints} from '../helpers/endpoints.js'

const SMALL = path.join(ROOT, 'fixtures', 'topology', 'layout-small.yaml')
const HOSTS = path.join(ROOT, 'fixtures', 'topology', 'layout-small-hosts.yaml')
const GEN = 'scripts/gen-topology-fixture.mjs'
const SMALL_DOC: Layout = YAML.parse(fs.readFileSync(SMALL, 'utf8'))
const NO_CHANGES = 'No changes: the topology already matches the layout.'

async function ok(args: string[]): Promise<Result> {
  const r = await run(args)
  expect(r.code, `placemat ${args.join(' ')}\n${r.stderr}\n${r.stdout.slice(0, 2000)}`).toBe(0)
  return r
}
const json = async (args: string[]) => JSON.parse((await ok([...args, '--json'])).stdout)

async function fails(args: string[], code: number, text: string): Promise<Result> {
  const r = await run(args)
  expect(r.code, `placemat ${args.join(' ')}\n${r.stderr}\n${r.stdout}`).toBe(code)
  expect(r.stderr).toContain(text)
  return r
}

/** Each provider's name -> sorted aggregates. */
async function aggregates(client: PlacementClient): Promise<Record<string, string[]>> {
  const {providers} = await client.get('/placemat/v1/providers')
  return Object.fromEntries((providers as any[]).map((p) => [p.name, [...p.aggregates].sort()]))
}

const sortPlan = (p: any) => ({
  nodes: {create: [...p.nodes.create].sort(), update: [...p.nodes.update].sort(), delete: [...p.nodes.delete].sort()},
  hosts: {add: [...p.hosts.add].sort(), move: [...p.hosts.move].sort(), remove: [...p.hosts.remove].sort()},
})
const withoutGeneration = ({generation, ...rest}: any) => rest

let endpoints: Endpoints
let dir: string
let daemon: string[]
let plain: string[]
let daemonClient: PlacementClient
let plainClient: PlacementClient

async function newDbWithHosts(name: string, hosts = HOSTS): Promise<string> {
  const db = path.join(dir, name)
  await newDb(db)
  await ok(['apply', hosts, '--db', db])
  return db
}

const freshServer = (name: string): Promise<RunningServer> => serverIn(dir, name)

beforeAll(async () => {
  endpoints = await startEndpoints('placemat-topology-')
  ;({dir, daemon, plain, daemonClient, plainClient} = endpoints)
  await Promise.all([ok(['apply', HOSTS, ...daemon]), ok(['apply', HOSTS, ...plain])])
}, 60_000)

afterAll(() => stopEndpoints(endpoints))

describe('placemat topology', () => {
  let db: string
  let plainLayout: string

  it('applies the 2x3x4x8 layout on a file, a daemon and plain Placement alike; again plans nothing', async () => {
    db = await newDbWithHosts('small.db')
    const file = ['--db', db]

    const dry = await ok(['topology', 'apply', SMALL, '--dry-run', ...file])
    const lines = dry.stdout.trim().split('\n')
    expect(lines[0]).toBe('Plan: racks/rows/rooms 32 to create, 0 to update, 0 to delete; hosts 192 to add, 0 to move, 0 to remove.')
    expect(lines).toContain('+ room room-1')
    expect(lines).toContain('+ row row-1a (in room room-1)')
    expect(lines).toContain('+ rack rack-1a-01 (in row row-1a)')
    expect(lines).toContain('+ host cn-0001 -> rack rack-1a-01')
    expect(lines).toHaveLength(1 + 32 + 192 + 1)
    expect(lines.at(-1)).toBe('Dry run: nothing was changed.')
    expect((await json(['topology', 'layout', ...file])).rooms).toEqual([])

    const [a, b, c] = await Promise.all([
      json(['topology', 'apply', SMALL, ...file]),
      json(['topology', 'apply', SMALL, ...daemon]),
      json(['topology', 'apply', SMALL, ...plain]),
    ])
    expect(a).toMatchObject({transport: 'placemat', applied: true, dry_run: false, plan: {generation: 1}})
    expect(b).toMatchObject({transport: 'placemat', applied: true})
    expect(c).toMatchObject({transport: 'placement', applied: true})
    expect(a.plan.hosts.add).toHaveLength(192)
    expect(sortPlan(b.plan)).toEqual(sortPlan(a.plan))
    expect(sortPlan(c.plan)).toEqual(sortPlan(a.plan))

    // the same aggregates everywhere: every host in its rack's, row's and room's
    const aggs = await onFile(db, aggregates)
    expect(aggs['cn-0001']).toEqual([nodeUuid('rack', 'rack-1a-01'), nodeUuid('row', 'row-1a'), nodeUuid('room', 'room-1')].sort())
    expect(Object.values(aggs).every((x) => x.length === 3)).toBe(true)
    expect(await aggregates(daemonClient)).toEqual(aggs)
    expect(await aggregates(plainClient)).toEqual(aggs)

    for (const t of [file, daemon, plain]) expect((await ok(['topology', 'apply', SMALL, ...t])).stdout.trim()).toBe(NO_CHANGES)
    expect(await onFile(db, aggregates)).toEqual(aggs)

    // member_of a rack, row or room uuid: exactly its hosts (provider list --member-of)
    const names = async (agg: string, t: string[]) =>
      (await json(['provider', 'list', '--member-of', agg, ...t])).resource_providers.map((p: any) => p.name).sort()
    const rack = SMALL_DOC.rooms![1].rows![2].racks![3]
    expect(await names(nodeUuid('rack', rack.name), daemon)).toEqual(rack.hosts)
    expect(await names(nodeUuid('row', 'row-1b'), file)).toHaveLength(32)
    expect(await names(nodeUuid('room', 'room-2'), plain)).toHaveLength(96)

    // layout: YAML in the form with the generation, re-applicable as it is
    const yaml = (await ok(['topology', 'layout', ...file])).stdout
    expect(yaml).toContain(
      'generation: 1\nrooms:\n  - name: room-1\n    rows:\n      - name: row-1a\n        racks:\n          - name: rack-1a-01\n            hosts: [cn-0001, cn-0002,',
    )
    const parsed = YAML.parse(yaml)
    expect(parsed.rooms).toEqual(SMALL_DOC.rooms)
    const again = path.join(dir, 'again.yaml')
    fs.writeFileSync(again, yaml)
    expect((await ok(['topology', 'apply', again, ...file])).stdout.trim()).toBe(NO_CHANGES)
    expect(withoutGeneration(await json(['topology', 'layout', ...daemon]))).toEqual(
      withoutGeneration(await json(['topology', 'layout', ...file])),
    )

    // plain Placement: needs the file for the names; reads the hosts back from the aggregates
    await fails(['topology', 'layout', ...plain], 2, 'pass the layout file with --layout FILE')
    await fails(['topology', 'show', ...plain], 2, 'pass the layout file with --layout FILE')
    expect((await json(['topology', 'layout', '--layout', SMALL, ...plain])).rooms).toEqual(SMALL_DOC.rooms)

    // show: the same view from all three
    const view = await json(['topology', 'show', ...file])
    expect(view.generation).toBe(1)
    expect(await json(['topology', 'show', ...daemon])).toEqual(view)
    expect((await json(['topology', 'show', '--layout', SMALL, ...plain])).topology).toEqual(view.topology)
    plainLayout = path.join(dir, 'plain-layout.yaml')
    fs.copyFileSync(SMALL, plainLayout)
  }, 120_000)

  it('show prints the tree with used/capacity rolled up', async () => {
    const db2 = await newDbWithHosts('show.db')
    await ok(['topology', 'apply', SMALL, '--db', db2])
    const uuid = (await json(['provider', 'show', 'cn-0002', '--db', db2])).uuid
    await onFile(db2, (c) =>
      c.put('/allocations/7d8f2c1e-0000-4000-8000-000000000001', {
        allocations: {[uuid]: {resources: {VCPU: 12, MEMORY_MB: 4096}}},
        project_id: 'p',
        user_id: 'u',
        consumer_generation: null,
        consumer_type: 'INSTANCE',
      }),
    )
    const out = (await ok(['topology', 'show', '--db', db2])).stdout.split('\n')
    expect(out[0]).toMatch(/^NAME\s+LEVEL\s+HOSTS\s+VCPU\s+MEMORY_MB\s+DISK_GB$/)
    expect(out[1]).toMatch(/^room-1\s+room\s+96\s+12\/6144\s+4096\/25165824\s+0\/192000$/)
    expect(out[2]).toMatch(/^ {2}row-1a\s+row\s+32\s+12\/2048\s/)
    expect(out[3]).toMatch(/^ {4}rack-1a-01\s+rack\s+8\s+12\/512\s/)
    expect(out[4]).toMatch(/^ {6}cn-0001\s+host\s+1\s+0\/64\s/)
    expect(out[5]).toMatch(/^ {6}cn-0002\s+host\s+1\s+12\/64\s+4096\/262144\s+0\/2000$/)
    expect(out.filter(Boolean)).toHaveLength(1 + 32 + 192)
    const racksOnly = (await ok(['topology', 'show', '--no-hosts', '-c', 'name,hosts,VCPU', '--db', db2])).stdout
      .split('\n')
      .filter(Boolean)
    expect(racksOnly).toHaveLength(1 + 32)
    expect(racksOnly[0]).toMatch(/^NAME\s+HOSTS\s+VCPU$/)
    const view = await json(['topology', 'show', '--db', db2])
    const vcpu = (v: any) => v.used.VCPU ?? 0
    expect(view.topology.reduce((n: number, v: any) => n + vcpu(v), 0)).toBe(12)
    expect(view.topology[0].capacity.VCPU).toBe(view.topology[0].children.reduce((n: number, r: any) => n + r.capacity.VCPU, 0))
  }, 60_000)

  it('rack, row and room commands edit the layout the same way everywhere', async () => {
    const file = ['--db', db]
    const onPlain = [...plain, '--layout', plainLayout]
    const steps: Array<[string[], (plan: any) => void]> = [
      [
        ['rack', 'create', 'rack-new', '--hosts', 'cn-0001,cn-0002', '--row', 'row-1b'],
        (p) => {
          expect(p.nodes.create).toEqual(['rack rack-new'])
          expect(p.hosts.move.sort()).toEqual(['cn-0001', 'cn-0002'])
        },
      ],
      // moving a rack between rows
      [
        ['row', 'add', 'row-2b', 'rack-1a-02'],
        (p) => {
          expect(p.nodes.update).toEqual(['rack rack-1a-02'])
          expect(p.hosts).toEqual({add: [], move: [], remove: []}) // its hosts stay in it
        },
      ],
      [['rack', 'remove', 'rack-1a-03', 'cn-0017'], (p) => expect(p.hosts.remove).toEqual(['cn-0017'])],
      [['rack', 'add', 'rack-new', 'cn-0017', 'cn-0001'], (p) => expect(p.hosts.add).toEqual(['cn-0017'])],
      [
        ['row', 'create', 'row-x', '--racks', 'rack-1a-04,rack-2c-04', '--room', 'room-1'],
        (p) => {
          expect(p.nodes.create).toEqual(['row row-x'])
          expect(p.hosts.move).toEqual([]) // the racks move; their hosts stay in them
        },
      ],
      [
        ['room', 'create', 'room-3', '--rows', 'row-1c'],
        (p) => expect(p.nodes).toMatchObject({create: ['room room-3'], update: ['row row-1c']}),
      ],
      [['row', 'remove', 'row-x', 'rack-2c-04'], (p) => expect(p.nodes.update).toEqual(['rack rack-2c-04'])],
      [
        ['rack', 'delete', 'rack-2c-03'],
        (p) => {
          expect(p.nodes.delete).toEqual(['rack rack-2c-03'])
          expect(p.hosts.remove).toHaveLength(8)
        },
      ],
      [['room', 'delete', 'room-3'], (p) => expect(p.nodes.delete).toEqual(['room room-3'])],
      [['row', 'delete', 'row-x'], (p) => expect(p.nodes).toMatchObject({update: ['rack rack-1a-04'], delete: ['row row-x']})],
      [['room', 'add', 'room-2', 'row-1c'], (p) => expect(p.nodes.update).toEqual(['row row-1c'])],
      [['room', 'remove', 'room-2', 'row-1c'], (p) => expect(p.nodes.update).toEqual(['row row-1c'])],
    ]
    for (const [i, [args, check]] of steps.entries()) {
      // --dry-run plans the same and changes nothing (on a few steps: each run of the binary takes a while)
      const dry = i % 4 === 0 ? await json([...args, '--dry-run', ...onPlain]) : undefined
      const before = dry && fs.readFileSync(plainLayout, 'utf8')
      let [a, b, c] = await Promise.all([
        json([...args, ...file]),
        json([...args, ...daemon]),
        dry ? undefined : json([...args, ...onPlain]),
      ])
      check(a.plan)
      if (dry) {
        expect(dry).toMatchObject({dry_run: true, applied: false})
        expect(sortPlan(dry.plan)).toEqual(sortPlan(a.plan))
        expect(await aggregates(plainClient)).not.toEqual(await aggregates(daemonClient))
        expect(fs.readFileSync(plainLayout, 'utf8')).toBe(before)
        c = await json([...args, ...onPlain])
      }
      expect(sortPlan(b.plan)).toEqual(sortPlan(a.plan))
      expect(sortPlan(c.plan), `plain: ${args.join(' ')}`).toEqual(sortPlan(a.plan))
    }
    const layout = withoutGeneration(await json(['topology', 'layout', ...file]))
    expect(withoutGeneration(await json(['topology', 'layout', ...daemon]))).toEqual(layout)
    const aggs = await onFile(db, aggregates)
    expect(await aggregates(daemonClient)).toEqual(aggs)
    expect(await aggregates(plainClient)).toEqual(aggs)
    // the plain layout file is the record: it holds the same layout
    const sortDoc = (l: any) =>
      JSON.parse(
        JSON.stringify(l, (_k, v) =>
          Array.isArray(v) && v.every((x) => typeof x === 'string')
            ? [...v].sort()
            : Array.isArray(v)
              ? [...v].sort((x, y) => (x.name < y.name ? -1 : 1))
              : v,
        ),
      )
    expect(sortDoc(YAML.parse(fs.readFileSync(plainLayout, 'utf8')))).toEqual(sortDoc(layout))
    expect(sortDoc(await json(['topology', 'layout', '--layout', plainLayout, ...plain]))).toEqual(sortDoc(layout))

    // the moved rack's hosts follow it: rack, row-2b, room-2
    expect(aggs['cn-0009']).toEqual([nodeUuid('rack', 'rack-1a-02'), nodeUuid('row', 'row-2b'), nodeUuid('room', 'room-2')].sort())
    // rack-1a-04 stands alone now, rack-2c-03 is gone, row-1c stands alone
    expect(aggs['cn-0025']).toEqual([nodeUuid('rack', 'rack-1a-04')])
    expect(aggs['cn-0177']).toEqual([])
    expect(aggs['cn-0185']).toEqual([nodeUuid('rack', 'rack-2c-04')])
    expect(aggs['cn-0065']).toEqual([nodeUuid('rack', 'rack-1c-01'), nodeUuid('row', 'row-1c')].sort())
    expect(aggs['cn-0001']).toEqual([nodeUuid('rack', 'rack-new'), nodeUuid('row', 'row-1b'), nodeUuid('room', 'room-1')].sort())
    expect(layout.racks.map((k: any) => k.name)).toEqual(['rack-1a-04', 'rack-2c-04'])
    expect(layout.rows.map((r: any) => r.name)).toEqual(['row-1c'])
  }, 180_000)

  it('apply keeps the rack, row and room aggregates a host file does not mention', async () => {
    const mine = path.join(dir, 'keep.db')
    await fs.promises.copyFile(await newDbWithHosts('keep-src.db'), mine)
    await ok(['topology', 'apply', SMALL, '--db', mine])
    const placed = [nodeUuid('rack', 'rack-1a-01'), nodeUuid('row', 'row-1a'), nodeUuid('room', 'room-1')].sort()
    expect((await onFile(mine, aggregates))['cn-0001']).toEqual(placed)
    const other = 'bbbbbbbb-0000-4000-8000-000000000001'
    const hostFile = (aggs: string[]) => {
      const f = path.join(dir, `host-${aggs.length}.yaml`)
      fs.writeFileSync(f, YAML.stringify({providers: [{name: 'cn-0001', aggregates: aggs}]}))
      return f
    }
    // The file's aggregates are the host's other aggregates: its topology ones stay.
    await ok(['apply', hostFile([other]), '--db', mine])
    expect((await onFile(mine, aggregates))['cn-0001']).toEqual([...placed, other].sort())
    const again = await json(['apply', hostFile([other]), '--db', mine, '--dry-run'])
    expect(again.changes).toEqual([])
    await ok(['apply', hostFile([]), '--db', mine])
    expect((await onFile(mine, aggregates))['cn-0001']).toEqual(placed)
  }, 60_000)

  it('refuses what cannot be done, with its exit code, and changes nothing', async () => {
    const file = ['--db', db]
    const before = await json(['topology', 'layout', ...file])
    await Promise.all(
      [file, daemon].flatMap((t) => [
        fails(['rack', 'create', 'rack-new', ...t], 4, 'rack rack-new already exists (in row row-1b)'),
        fails(['row', 'create', 'row-1a', ...t], 4, 'row row-1a already exists (in room room-1)'),
        fails(['rack', 'add', 'no-such-rack', 'cn-0001', ...t], 3, 'no rack named no-such-rack'),
        fails(['rack', 'add', 'rack-new', 'no-such-host', ...t], 3, "No resource provider with uuid or name 'no-such-host' found"),
        fails(['rack', 'remove', 'rack-new', 'cn-0100', ...t], 3, 'not in rack rack-new: cn-0100'),
        fails(['row', 'add', 'row-1a', 'no-such-rack', ...t], 3, 'no rack named no-such-rack'),
        fails(['rack', 'create', 'rack-y', '--row', 'no-such-row', ...t], 3, 'no row named no-such-row'),
        fails(['room', 'delete', 'no-such-room', ...t], 3, 'no room named no-such-room'),
      ]),
    )
    await fails(['rack', 'add', 'rack-1a-01', 'cn-0003', ...plain], 2, 'pass the layout file with --layout FILE')

    const twice = structuredClone(SMALL_DOC)
    twice.rooms![1].rows![0].racks![0].hosts!.push('cn-0001')
    const unknown = structuredClone(SMALL_DOC)
    unknown.rooms![0].rows![0].racks![0].hosts!.push('cn-9999')
    const dup = structuredClone(SMALL_DOC)
    dup.racks = [{name: 'rack-1a-01', hosts: []}]
    const cases: Array<[string, number, string]> = [
      [YAML.stringify(twice), 6, 'Invalid layout: host cn-0001 is in two racks (rack-1a-01 and rack-2a-01)'],
      [YAML.stringify(unknown), 6, 'Invalid layout: unknown host(s): cn-9999'],
      [YAML.stringify(dup), 6, 'Invalid layout: rack rack-1a-01 appears twice'],
      ['rooms:\n  - name: room-1\n    racks: []\n', 2, 'rooms[0].racks: unknown key; expected name, rows'],
      ['rooms: [[[\n', 2, 'not valid YAML or JSON'],
    ]
    await Promise.all(
      cases.flatMap(([text, code, message], i) => {
        const bad = path.join(dir, `bad-${i}.yaml`)
        fs.writeFileSync(bad, text)
        return [file, daemon, plain].map((t) => fails(['topology', 'apply', bad, ...t], code, message))
      }),
    )
    expect(await json(['topology', 'layout', ...file])).toEqual(before)
  }, 180_000)

  it('a concurrent edit fails cleanly (exit 4); rack commands retry it', async () => {
    const file = ['--db', db]
    for (const t of [file, daemon]) {
      // a layout read at generation g, edited, applied after someone else changed the topology
      const text = (await ok(['topology', 'layout', ...t])).stdout
      const g = YAML.parse(text).generation
      const edited = path.join(dir, 'edited.yaml')
      fs.writeFileSync(edited, text.replace('hosts: [cn-0001, cn-0002, cn-0017]', 'hosts: [cn-0001, cn-0017]'))
      expect((await ok(['topology', 'apply', edited, '--prune', '--dry-run', ...t])).stdout).toContain('- host cn-0002')
      await ok(['rack', 'add', 'rack-2a-01', 'cn-0150', ...t])
      const mid = await json(['topology', 'layout', ...t])
      expect(mid.generation).toBe(g + 1)
      const stale = await fails(
        ['topology', 'apply', edited, '--prune', ...t],
        4,
        `the topology changed since the file was read: topology generation conflict: expected ${g}, found ${g + 1}`,
      )
      // The file pins the generation, so "run again" would fail the same way: say what helps.
      expect(stale.stderr).toContain(`the file's "generation: ${g}" is stale: read the layout again (placemat topology layout)`)
      expect(stale.stderr).not.toContain('run again')
      await fails(['topology', 'apply', SMALL, '--generation', String(g), ...t], 4, 'topology generation conflict')
      expect(await json(['topology', 'layout', ...t])).toEqual(mid)
      // without the generation line it applies (and undoes the other change)
      fs.writeFileSync(edited, fs.readFileSync(edited, 'utf8').replace(/^generation: \d+\n/m, ''))
      const res = await json(['topology', 'apply', edited, '--prune', ...t])
      expect(res.plan.hosts).toEqual({add: [], move: ['cn-0150'], remove: ['cn-0002']})

      // two edits at once: the later one re-reads and retries, both land
      const [a, b] = await Promise.all([
        run(['rack', 'add', 'rack-2a-01', 'cn-0002', ...t]),
        run(['rack', 'add', 'rack-2a-02', 'cn-0150', ...t]),
      ])
      expect([a.code, b.code, a.stderr + b.stderr]).toEqual([0, 0, ''])
      const now = await json(['topology', 'layout', ...t])
      const rackHosts = (name: string) =>
        now.rooms.flatMap((m: any) => m.rows.flatMap((r: any) => r.racks)).find((k: any) => k.name === name).hosts
      expect(rackHosts('rack-2a-01')).toContain('cn-0002')
      expect(rackHosts('rack-2a-02')).toContain('cn-0150')
    }
  }, 120_000)

  it('deletes only with --prune: a file with one new room adds it; an empty file needs --prune (file and daemon)', async () => {
    const fresh = await freshServer('prune-daemon.db')
    try {
      const viaDaemon = ['--url', fresh.url, '--token', 'admin']
      await ok(['apply', HOSTS, ...viaDaemon])
      const newRoom = path.join(dir, 'new-room.yaml')
      fs.writeFileSync(newRoom, 'rooms:\n  - name: room-9\n')
      const empty = path.join(dir, 'empty-layout.yaml')
      fs.writeFileSync(empty, 'rooms: []\n')
      for (const t of [['--db', await newDbWithHosts('prune.db')], viaDaemon]) {
        await ok(['topology', 'apply', SMALL, ...t])
        const before = await json(['topology', 'layout', ...t])
        const dry = await ok(['topology', 'apply', newRoom, '--dry-run', ...t])
        expect(dry.stdout).toBe(
          'Plan: racks/rows/rooms 1 to create, 0 to update, 0 to delete; hosts 0 to add, 0 to move, 0 to remove.\n+ room room-9\nDry run: nothing was changed.\n',
        )
        const added = await json(['topology', 'apply', newRoom, ...t])
        expect(sortPlan(added.plan)).toEqual({
          nodes: {create: ['room room-9'], update: [], delete: []},
          hosts: {add: [], move: [], remove: []},
        })
        const after = await json(['topology', 'layout', ...t])
        expect(after.rooms).toEqual([...before.rooms, {name: 'room-9', rows: []}])
        expect((await ok(['topology', 'apply', newRoom, ...t])).stdout.trim()).toBe(NO_CHANGES)

        // An empty file would empty the topology: refused without --prune, before anything is read.
        await fails(
          ['topology', 'apply', empty, ...t],
          2,
          `${empty} names no rack, row or room: without --prune that changes nothing; to empty the topology, give --prune`,
        )
        expect(await json(['topology', 'layout', ...t])).toEqual(after)

        // --prune: the topology is exactly the file.
        const pruned = await json(['topology', 'apply', newRoom, '--prune', '--dry-run', ...t])
        expect(pruned.plan.nodes.delete).toHaveLength(32)
        expect(pruned.plan.hosts.remove).toHaveLength(192)
        const emptied = await json(['topology', 'apply', empty, '--prune', ...t])
        expect(emptied.plan.nodes.delete).toHaveLength(33)
        expect((await json(['topology', 'layout', ...t])).rooms).toEqual([])
      }
    } finally {
      await fresh.close()
    }
  }, 120_000)

  it('a dry run with a stale --generation exits as the apply would (4), saying it is a dry run (file and daemon)', async () => {
    const fresh = await freshServer('stale-daemon.db')
    try {
      const viaDaemon = ['--url', fresh.url, '--token', 'admin']
      await ok(['apply', HOSTS, ...viaDaemon])
      const newRoom = path.join(dir, 'stale-room.yaml')
      fs.writeFileSync(newRoom, 'rooms:\n  - name: room-7\n')
      for (const t of [['--db', await newDbWithHosts('stale.db')], viaDaemon]) {
        await ok(['topology', 'apply', SMALL, ...t])
        await ok(['rack', 'create', 'rack-extra', ...t])
        const g = (await json(['topology', 'layout', ...t])).generation
        const said = `409 [placement.concurrent_update]: the topology changed since the file was read: topology generation conflict: expected ${g - 1}, found ${g}; nothing was applied. --generation is stale`
        const run = await fails(['topology', 'apply', newRoom, '--generation', String(g - 1), ...t], 4, said)
        const dry = await fails(
          ['topology', 'apply', newRoom, '--generation', String(g - 1), '--dry-run', ...t],
          4,
          said.replace(': the topology', ': dry run: the change would fail: the topology'),
        )
        expect(dry.stderr.split('\n')).toHaveLength(2)
        expect(dry.stdout).toBe(run.stdout + 'Dry run: nothing was changed.\n')
        expect(
          JSON.parse(
            (await fails(['topology', 'apply', newRoom, '--generation', String(g - 1), '--dry-run', '--json', ...t], 4, 'dry run')).stdout,
          ),
        ).toMatchObject({dry_run: true, applied: false})
        // At the generation it is at, the dry run plans and exits 0; a file that changes nothing is not refused.
        await ok(['topology', 'apply', newRoom, '--generation', String(g), '--dry-run', ...t])
        await ok(['topology', 'apply', SMALL, '--generation', String(g - 1), '--dry-run', ...t])
        expect((await json(['topology', 'layout', ...t])).generation).toBe(g)
      }
    } finally {
      await fresh.close()
    }
  }, 120_000)

  it('applies a generated bigger layout via a daemon and offline (functional check, not timed)', async () => {
    const prefix = path.join(dir, 'mid')
    const gen = await script(GEN, ['2', '2', '5', '20', '--out', prefix])
    expect(gen.code, gen.stderr).toBe(0)
    const big = await freshServer('mid-daemon.db')
    try {
      const viaDaemon = ['--url', big.url, '--token', 'admin']
      const midDb = await newDbWithHosts('mid.db', `${prefix}-hosts.yaml`)
      await ok(['apply', `${prefix}-hosts.yaml`, ...viaDaemon])
      const [a, b] = await Promise.all([
        json(['topology', 'apply', `${prefix}.yaml`, '--db', midDb]),
        json(['topology', 'apply', `${prefix}.yaml`, ...viaDaemon]),
      ])
      expect(a.plan.hosts.add).toHaveLength(400)
      expect(b.plan.hosts.add).toHaveLength(400)
      for (const t of [['--db', midDb], viaDaemon])
        expect((await ok(['topology', 'apply', `${prefix}.yaml`, ...t])).stdout.trim()).toBe(NO_CHANGES)
      const view = await json(['topology', 'show', '--db', midDb])
      expect(view.topology.map((v: any) => v.capacity.VCPU)).toEqual([200 * 64, 200 * 64])
      expect(await aggregates(new PlacementClient(new HttpTransport(big.url, 'admin')))).toEqual(await onFile(midDb, aggregates))
    } finally {
      await big.close()
    }
  }, 180_000)
})
