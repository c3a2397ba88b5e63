/**
 * Racks, rows and rooms through the HTTP API (inject): PUT/GET /placemat/v1/topology/layout
 * and GET /placemat/v1/topology on the 2 rooms x 3 rows x 4 racks x 8 hosts fixture.
 */
import {randomUUID} from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import YAML from 'yaml'
import {nodeUuid, type Layout} from '../../src/core/topology.js'
import type {TopologyView} from '../../src/core/topology-view.js'
import {edits} from '../../src/core/layout-edits.js'
import {testApi, type TestApi} from '../helpers/http-helpers.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const SMALL: Layout = YAML.parse(fs.readFileSync(path.join(ROOT, 'fixtures', 'topology', 'layout-small.yaml'), 'utf8'))
const LAYOUT = '/placemat/v1/topology/layout'

const clone = (l: Layout): Layout => structuredClone(l)
const hostsOfRack = (l: Layout, rack: string) => {
  for (const m of l.rooms ?? []) for (const r of m.rows ?? []) for (const k of r.racks ?? []) if (k.name === rack) return k.hosts ?? []
  throw new Error(`no rack ${rack}`)
}
const allHosts = (l: Layout) => (l.rooms ?? []).flatMap((m) => (m.rows ?? []).flatMap((r) => (r.racks ?? []).flatMap((k) => k.hosts ?? [])))

let api: TestApi
/** host name -> uuid */
let uuids: Map<string, string>

async function ok(method: string, url: string, body?: unknown) {
  const res = await api.call(method, url, body)
  expect(res.status, `${method} ${url}: ${JSON.stringify(res.body)}`).toBeLessThan(300)
  return res.body
}

/** Every host's aggregates, generations, the layout and the view: what a failed write must leave as it was. */
async function snapshot() {
  const {providers} = await ok('GET', '/placemat/v1/providers')
  return {
    providers: (providers as any[]).map((p) => ({uuid: p.uuid, generation: p.generation, aggregates: [...p.aggregates].sort()})),
    layout: await ok('GET', LAYOUT),
    view: await ok('GET', '/placemat/v1/topology'),
  }
}

async function aggregatesOf(host: string): Promise<string[]> {
  return (await ok('GET', `/resource_providers/${uuids.get(host)}/aggregates`)).aggregates.sort()
}

async function membersOf(agg: string): Promise<string[]> {
  const body = await ok('GET', `/resource_providers?member_of=${agg}`)
  return (body.resource_providers as any[]).map((p) => p.name).sort()
}

beforeEach(async () => {
  api = await testApi()
  uuids = new Map(allHosts(SMALL).map((h) => [h, randomUUID()]))
  const operations = [...uuids].flatMap(([name, uuid]) => [
    {op: 'create_provider', uuid, name},
    {op: 'set_inventories', uuid, inventories: {VCPU: {total: 64}, MEMORY_MB: {total: 262144, reserved: 4096}, DISK_GB: {total: 2000}}},
  ])
  await ok('POST', '/placemat/v1/batch', {operations})
})

afterEach(async () => {
  await api.close()
})

describe('topology layout', () => {
  it('applies the 2x3x4x8 fixture, and applying it again plans nothing', async () => {
    const dry = await ok('PUT', `${LAYOUT}?dry_run=true`, SMALL)
    expect(dry.applied).toBe(false)
    expect(dry.plan.nodes.create).toHaveLength(2 + 6 + 24)
    expect(dry.plan.hosts.add).toHaveLength(192)
    expect((await ok('GET', LAYOUT)).rooms).toEqual([])

    const first = await ok('PUT', LAYOUT, SMALL)
    expect(first.applied).toBe(true)
    expect(first.plan.nodes.create).toContain('rack rack-1a-01')
    expect(first.plan.hosts.add).toHaveLength(192)
    const gen = first.plan.generation

    const before = await snapshot()
    const again = await ok('PUT', LAYOUT, SMALL)
    expect(again.plan).toEqual({
      generation: gen,
      nodes: {create: [], update: [], delete: []},
      hosts: {add: [], move: [], remove: []},
      violations: [],
    })
    expect(await snapshot()).toEqual(before)

    // the stored layout is the file (sorted), and re-applying it plans nothing either
    const {generation, ...stored} = await ok('GET', LAYOUT)
    expect(generation).toBe(gen)
    expect(stored.rooms).toEqual(SMALL.rooms)
    expect((await ok('PUT', `${LAYOUT}?dry_run=true`, stored)).plan.hosts).toEqual({add: [], move: [], remove: []})

    // a host is in its rack's, row's and room's aggregates
    expect(await aggregatesOf('cn-0001')).toEqual(
      [nodeUuid('rack', 'rack-1a-01'), nodeUuid('row', 'row-1a'), nodeUuid('room', 'room-1')].sort(),
    )
  })

  it('member_of a rack, row or room uuid returns exactly its hosts', async () => {
    await ok('PUT', LAYOUT, SMALL)
    expect(await membersOf(nodeUuid('rack', 'rack-1b-03'))).toEqual([...hostsOfRack(SMALL, 'rack-1b-03')].sort())
    const row = SMALL.rooms![1].rows![2]
    expect(await membersOf(nodeUuid('row', row.name))).toEqual(row.racks!.flatMap((k) => k.hosts!).sort())
    const room = SMALL.rooms![0]
    const roomHosts = room.rows!.flatMap((r) => r.racks!.flatMap((k) => k.hosts!)).sort()
    expect(roomHosts).toHaveLength(96)
    expect(await membersOf(nodeUuid('room', room.name))).toEqual(roomHosts)
    // in:rack,rack and AND of room and rack
    const two = await membersOf(`in:${nodeUuid('rack', 'rack-1a-01')},${nodeUuid('rack', 'rack-2c-04')}`)
    expect(two).toEqual([...hostsOfRack(SMALL, 'rack-1a-01'), ...hostsOfRack(SMALL, 'rack-2c-04')].sort())
    const body = await ok('GET', `/resource_providers?member_of=${nodeUuid('room', 'room-2')}&member_of=${nodeUuid('rack', 'rack-1a-01')}`)
    expect(body.resource_providers).toEqual([])
  })

  it("keeps a host's other aggregates and bumps its generation once", async () => {
    const other = randomUUID()
    const u = uuids.get('cn-0001')!
    const cur = await ok('GET', `/resource_providers/${u}/aggregates`)
    await ok('PUT', `/resource_providers/${u}/aggregates`, {
      aggregates: [other],
      resource_provider_generation: cur.resource_provider_generation,
    })
    const gen0 = (await ok('GET', `/resource_providers/${u}`)).generation
    await ok('PUT', LAYOUT, SMALL)
    expect(await aggregatesOf('cn-0001')).toEqual(
      [other, nodeUuid('rack', 'rack-1a-01'), nodeUuid('row', 'row-1a'), nodeUuid('room', 'room-1')].sort(),
    )
    expect((await ok('GET', `/resource_providers/${u}`)).generation).toBe(gen0 + 1)

    // leaving the topology keeps it too
    const out = clone(SMALL)
    edits.rackRemove(out, 'rack-1a-01', ['cn-0001'])
    await ok('PUT', LAYOUT, out)
    expect(await aggregatesOf('cn-0001')).toEqual([other])
    // and the topology never touches a provider's aggregates it does not manage
    expect(await aggregatesOf('cn-0100')).toHaveLength(3)
  })

  it("moves a rack between rows: its hosts' row and room aggregates follow", async () => {
    await ok('PUT', LAYOUT, SMALL)
    const moved = clone(SMALL)
    edits.rowAdd(moved, 'row-2b', ['rack-1a-01'])
    const res = await ok('PUT', LAYOUT, moved)
    expect(res.plan.nodes).toEqual({create: [], update: ['rack rack-1a-01'], delete: []})
    // The hosts stay in their rack: the rack's move is the one change listed (their aggregates follow).
    expect(res.plan.hosts).toEqual({add: [], move: [], remove: []})
    for (const h of hostsOfRack(SMALL, 'rack-1a-01')) {
      expect(await aggregatesOf(h)).toEqual([nodeUuid('rack', 'rack-1a-01'), nodeUuid('row', 'row-2b'), nodeUuid('room', 'room-2')].sort())
    }
    expect(await membersOf(nodeUuid('row', 'row-1a'))).toHaveLength(24)
    expect(await membersOf(nodeUuid('row', 'row-2b'))).toHaveLength(40)
    expect(await membersOf(nodeUuid('room', 'room-1'))).toHaveLength(88)
    expect(await membersOf(nodeUuid('room', 'room-2'))).toHaveLength(104)
    const stored = await ok('GET', LAYOUT)
    expect(stored.rooms[1].rows[1].racks.map((k: any) => k.name)).toEqual([
      'rack-1a-01',
      'rack-2b-01',
      'rack-2b-02',
      'rack-2b-03',
      'rack-2b-04',
    ])
  })

  it('removes a host, deletes racks, rows and rooms', async () => {
    await ok('PUT', LAYOUT, SMALL)
    const less = clone(SMALL)
    edits.rackRemove(less, 'rack-1a-01', ['cn-0002'])
    const res = await ok('PUT', LAYOUT, less)
    expect(res.plan.hosts).toEqual({add: [], move: [], remove: ['cn-0002']})
    expect(await aggregatesOf('cn-0002')).toEqual([])
    expect(await membersOf(nodeUuid('rack', 'rack-1a-01'))).not.toContain('cn-0002')

    // the room goes, its rows stand alone: their hosts lose only the room aggregate
    edits.roomDelete(less, 'room-1')
    const r2 = await ok('PUT', LAYOUT, less)
    expect(r2.plan.nodes).toEqual({create: [], update: ['row row-1a', 'row row-1b', 'row row-1c'], delete: ['room room-1']})
    expect(await aggregatesOf('cn-0001')).toEqual([nodeUuid('rack', 'rack-1a-01'), nodeUuid('row', 'row-1a')].sort())
    const stored = await ok('GET', LAYOUT)
    expect(stored.rooms.map((m: any) => m.name)).toEqual(['room-2'])
    expect(stored.rows.map((r: any) => r.name)).toEqual(['row-1a', 'row-1b', 'row-1c'])

    // everything goes
    const none = await ok('PUT', LAYOUT, {})
    expect(none.plan.hosts.remove).toHaveLength(191)
    expect(none.plan.nodes.delete).toHaveLength(31)
    expect((await ok('GET', '/placemat/v1/topology')).topology).toEqual([])
    expect(await aggregatesOf('cn-0192')).toEqual([])
  })

  it('a concurrent layout edit is a 409 and changes nothing', async () => {
    await ok('PUT', LAYOUT, SMALL)
    const {generation, ...doc} = await ok('GET', LAYOUT)
    const a = clone(doc)
    edits.rackAdd(a, 'rack-1a-01', ['cn-0100'])
    const b = clone(doc)
    edits.rackDelete(b, 'rack-2c-04')
    expect((await api.call('PUT', LAYOUT, {...a, generation})).status).toBe(200)
    const before = await snapshot()
    const res = await api.call('PUT', LAYOUT, {...b, generation})
    expect(res.status).toBe(409)
    expect(res.body.errors[0].code).toBe('placement.concurrent_update')
    expect(await snapshot()).toEqual(before)
    // The dry run says so, as the write's error, and changes nothing either.
    const dry = await ok('PUT', `${LAYOUT}?dry_run=true`, {...b, generation})
    expect(dry.error).toEqual({
      status: 409,
      code: 'placement.concurrent_update',
      detail: `topology generation conflict: expected ${generation}, found ${generation + 1}`,
    })
    expect(res.body.errors[0].detail).toContain(dry.error.detail)
    expect(dry.plan.nodes.delete).toEqual(['rack rack-2c-04'])
    expect((await ok('PUT', `${LAYOUT}?dry_run=true`, {...b, generation: generation + 1})).error).toBeNull()
    expect(await snapshot()).toEqual(before)
    // without a generation, the last writer wins
    expect((await api.call('PUT', LAYOUT, b)).status).toBe(200)
  })

  it('?prune=false changes what the body names and keeps the rest', async () => {
    await ok('PUT', LAYOUT, SMALL)
    const {generation: _g, ...whole} = await ok('GET', LAYOUT)
    const dry = await ok('PUT', `${LAYOUT}?dry_run=true&prune=false`, {rooms: [{name: 'room-9'}]})
    expect(dry).toMatchObject({
      applied: false,
      error: null,
      plan: {nodes: {create: ['room room-9'], update: [], delete: []}, hosts: {add: [], move: [], remove: []}},
    })
    const res = await ok('PUT', `${LAYOUT}?prune=false`, {racks: [{name: 'rack-new', hosts: ['cn-0001']}]})
    expect(res.plan.nodes).toEqual({create: ['rack rack-new'], update: [], delete: []})
    expect(res.plan.hosts).toEqual({add: [], move: ['cn-0001'], remove: []})
    const stored = await ok('GET', LAYOUT)
    expect(stored.racks).toEqual([{name: 'rack-new', hosts: ['cn-0001']}])
    expect(hostsOfRack(stored, 'rack-1a-01')).toEqual(hostsOfRack(whole, 'rack-1a-01').filter((h: string) => h !== 'cn-0001'))
    expect(stored.rooms).toHaveLength(2)
    // prune=true (as without the parameter) makes it exactly the body
    expect((await ok('PUT', `${LAYOUT}?dry_run=true&prune=true`, {rooms: [{name: 'room-9'}]})).plan.nodes.delete).toHaveLength(33)
    expect((await api.call('PUT', `${LAYOUT}?prune=maybe`, SMALL)).status).toBe(400)
  })

  it('rejects bad layouts with a 400 and changes nothing', async () => {
    await ok('PUT', LAYOUT, SMALL)
    const before = await snapshot()
    const bad = async (layout: unknown, text: string) => {
      const res = await api.call('PUT', LAYOUT, layout)
      expect(res.status, JSON.stringify(res.body)).toBe(400)
      expect(res.body.errors[0].detail).toContain(text)
      expect(await snapshot()).toEqual(before)
    }
    const unknownHost = clone(SMALL)
    unknownHost.rooms![0].rows![0].racks![0].hosts!.push('cn-9999')
    await bad(unknownHost, 'unknown host(s): cn-9999')

    const dupRack = clone(SMALL)
    dupRack.rooms![1].rows![0].racks!.push({name: 'rack-1a-01', hosts: []})
    await bad(dupRack, 'rack rack-1a-01 appears twice')

    const twice = clone(SMALL)
    twice.rooms![1].rows![0].racks![0].hosts!.push('cn-0001')
    await bad(twice, 'host cn-0001 is in two racks (rack-1a-01 and rack-2a-01)')

    const dupRow = clone(SMALL)
    dupRow.rows = [{name: 'row-1a'}]
    await bad(dupRow, 'row row-1a appears twice')

    await bad({rooms: [{name: 'room-1', racks: []}]}, 'JSON does not validate')
    await bad({rooms: [{name: ''}]}, 'JSON does not validate')
    expect((await api.call('PUT', `${LAYOUT}?dry_run=maybe`, SMALL)).status).toBe(400)

    // a child provider is not a host
    const child = randomUUID()
    await ok('POST', '/resource_providers', {uuid: child, name: 'cn-0001_numa0', parent_provider_uuid: uuids.get('cn-0001')})
    const snap = await snapshot()
    const notRoot = clone(SMALL)
    notRoot.racks = [{name: 'rack-odd', hosts: ['cn-0001_numa0']}]
    const res = await api.call('PUT', LAYOUT, notRoot)
    expect(res.status).toBe(400)
    expect(res.body.errors[0].detail).toContain('host cn-0001_numa0 is not a root provider')
    expect(await snapshot()).toEqual(snap)
  })

  it('rolls capacity and usage up: hosts (whole trees) into racks, rows and rooms', async () => {
    // a NUMA child under cn-0003 counts for its host
    const child = randomUUID()
    await ok('POST', '/resource_providers', {uuid: child, name: 'cn-0003_numa0', parent_provider_uuid: uuids.get('cn-0003')})
    await ok('PUT', `/resource_providers/${child}/inventories`, {resource_provider_generation: 0, inventories: {PCPU: {total: 16}}})
    await ok('PUT', LAYOUT, SMALL)
    const consumers: Array<[string, Record<string, number>]> = [
      [uuids.get('cn-0001')!, {VCPU: 4, MEMORY_MB: 8192}],
      [uuids.get('cn-0002')!, {VCPU: 8, DISK_GB: 100}],
      [child, {PCPU: 2}],
      [uuids.get('cn-0150')!, {VCPU: 16}],
    ]
    for (const [rp, resources] of consumers) {
      await ok('PUT', `/allocations/${randomUUID()}`, {
        allocations: {[rp]: {resources}},
        project_id: 'p',
        user_id: 'u',
        consumer_generation: null,
        consumer_type: 'INSTANCE',
      })
    }
    const {generation, topology} = (await ok('GET', '/placemat/v1/topology')) as {generation: number; topology: TopologyView[]}
    expect(generation).toBe(1)
    expect(topology.map((v) => v.name)).toEqual(['room-1', 'room-2'])

    const sum = (views: Array<{capacity: Record<string, number>; used: Record<string, number>}>) => {
      const out = {capacity: {} as Record<string, number>, used: {} as Record<string, number>}
      for (const v of views) {
        for (const [k, n] of Object.entries(v.capacity)) out.capacity[k] = (out.capacity[k] ?? 0) + n
        for (const [k, n] of Object.entries(v.used)) out.used[k] = (out.used[k] ?? 0) + n
      }
      return out
    }
    const check = (v: TopologyView) => {
      const parts = v.children ?? v.hosts ?? []
      expect({capacity: v.capacity, used: v.used}, `${v.level} ${v.name}`).toEqual(sum(parts))
      for (const c of v.children ?? []) check(c)
    }
    topology.forEach(check)

    const rack = topology[0].children![0].children![0]
    expect(rack.name).toBe('rack-1a-01')
    expect(rack.hosts!.map((h) => h.name)).toEqual(hostsOfRack(SMALL, 'rack-1a-01'))
    expect(rack.capacity).toEqual({VCPU: 8 * 64, MEMORY_MB: 8 * 258048, DISK_GB: 8 * 2000, PCPU: 16})
    expect(rack.used).toEqual({VCPU: 12, MEMORY_MB: 8192, DISK_GB: 100, PCPU: 2})
    const cn3 = rack.hosts!.find((h) => h.name === 'cn-0003')!
    expect(cn3).toMatchObject({uuid: uuids.get('cn-0003'), capacity: {VCPU: 64, PCPU: 16}, used: {PCPU: 2}})
    const all = sum(topology)
    expect(all.capacity.VCPU).toBe(192 * 64)
    expect(all.used).toEqual({VCPU: 28, MEMORY_MB: 8192, DISK_GB: 100, PCPU: 2})
    expect(topology[1].used).toEqual({VCPU: 16})
  })
})
