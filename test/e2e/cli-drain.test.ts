/**
 * Taking a host out of service and emptying it, on the real binary, on a daemon and on a file
 * (--db): `host disable|enable|show`, and `drain HOST` of a host holding a member of a hard
 * anti-affinity group, a member of a spread and plain consumers (dry run, run, the host empty,
 * every rule still true, audit clean); a drain with no room elsewhere changes nothing (the
 * database byte for byte). On plain Placement: the trait without a reason, and a drain of plain
 * consumers. In process: a move refused with 409 is planned once more; one that still cannot
 * move keeps what it holds.
 *
 * The cloud: rack-a (cn-a1, cn-a2) and rack-b (cn-b1, cn-b2) in row-1, rack-c (cn-c1, cn-c2)
 * in row-2; 8 VCPU and 8192 MEMORY_MB each. cn-a1 is drained.
 */
import fs from 'node:fs'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import YAML from 'yaml'
import {PlacementClient} from '../../src/client/client.js'
import {LocalTransport} from '../../src/cli/backend/local-transport.js'
import {chooseBackend} from '../../src/cli/backend/choose.js'
import {drain} from '../../src/cli/services/drain.js'
import {dumpDb, placemat as run, type Result} from '../helpers/db-tools.js'
import {startEndpoints, stopEndpoints, type Endpoints} from '../helpers/endpoints.js'

const C = (name: string, i: number) =>
  `${{db: 'dd', web: 'ee', p: 'ff', x: 'aa', fill: 'cc'}[name]}000000-0000-4000-8000-${String(i).padStart(12, '0')}`
const HOSTS = ['cn-a1', 'cn-a2', 'cn-b1', 'cn-b2', 'cn-c1', 'cn-c2']

async function ok(args: string[], code = 0): Promise<Result> {
  const r = await run(args)
  expect(r.code, `placemat ${args.join(' ')}\n${r.stderr}\n${r.stdout.slice(0, 3000)}`).toBe(code)
  return r
}
const json = async (args: string[], code = 0) => JSON.parse((await ok([...args, '--json'], code)).stdout)

function writeCloud(dir: string): {cloud: string; layout: string} {
  const files = {cloud: path.join(dir, 'cloud.yaml'), layout: path.join(dir, 'layout.yaml')}
  fs.writeFileSync(files.cloud, YAML.stringify({providers: HOSTS.map((name) => ({name, inventories: {VCPU: 8, MEMORY_MB: 8192}}))}))
  const rack = (name: string, hosts: string[]) => ({name, hosts})
  fs.writeFileSync(
    files.layout,
    YAML.stringify({
      rows: [
        {name: 'row-1', racks: [rack('rack-a', ['cn-a1', 'cn-a2']), rack('rack-b', ['cn-b1', 'cn-b2'])]},
        {name: 'row-2', racks: [rack('rack-c', ['cn-c1', 'cn-c2'])]},
      ],
    }),
  )
  return files
}

/** Claims `consumer` on `host` (its tree), in `group` when given. */
const claimOn = (
  args: string[],
  consumer: string,
  host: string,
  resources: string,
  group?: string,
  owner = ['--project', 'proj', '--user', 'user', '--consumer-type', 'INSTANCE'],
) => ok(['claim', consumer, '--in-tree', host, '--resources', resources, ...(group ? ['--group', group] : []), ...owner, ...args])

describe('placemat host and drain', () => {
  let e: Endpoints
  let files: {cloud: string; layout: string}
  beforeAll(async () => {
    e = await startEndpoints('placemat-cli-drain-')
    files = writeCloud(e.dir)
    await ok(['db', 'init', '--db', path.join(e.dir, 'd.db')])
  })
  afterAll(() => stopEndpoints(e))

  const targets = () => [
    {what: 'a file', args: ['--db', path.join(e.dir, 'd.db')], file: path.join(e.dir, 'd.db')},
    {what: 'a daemon', args: e.daemon, file: path.join(e.dir, 'daemon.db')},
  ]

  it('host disable keeps the reason, host show and the tables say so, host enable takes it back', async () => {
    for (const {what, args} of targets()) {
      await ok(['apply', files.cloud, ...args])
      await ok(['topology', 'apply', files.layout, ...args])
      expect((await ok(['host', 'disable', 'cn-c2', '--reason', 'PSU failure, ticket 4711', ...args])).stdout, what).toBe(
        'Host cn-c2 disabled: PSU failure, ticket 4711\n',
      )
      const shown = (await ok(['host', 'show', 'cn-c2', ...args])).stdout
      expect(shown).toMatch(/^status +disabled$/m)
      expect(shown).toMatch(/^reason +PSU failure, ticket 4711$/m)
      expect(shown).toMatch(/^rack +rack-c$/m)
      const list = (await ok(['provider', 'list', '-c', 'name,status', '--sort-column', 'name', ...args])).stdout
      expect(list).toMatch(/^cn-c1 +enabled$/m)
      expect(list).toMatch(/^cn-c2 +disabled$/m)
      expect((await json(['provider', 'list', ...args])).resource_providers.find((p: any) => p.name === 'cn-c2').disabled).toBe(true)
      expect((await ok(['rack', 'show', 'rack-c', ...args])).stdout).toMatch(/^disabled +cn-c2$/m)
      expect((await ok(['top', '--once', ...args])).stdout).toContain('1 host disabled: cn-c2')
      // Disabling again changes nothing; a child provider is not a host.
      expect((await ok(['host', 'disable', 'cn-c2', ...args])).stdout).toBe('Host cn-c2 was already disabled: PSU failure, ticket 4711\n')
      expect((await ok(['host', 'enable', 'cn-c2', ...args])).stdout).toBe('Host cn-c2 enabled\n')
      expect(await json(['host', 'show', 'cn-c2', ...args])).toMatchObject({disabled: false, disabled_reason: null, consumers: []})
      expect((await run(['host', 'disable', 'no-such-host', ...args])).code).toBe(3)
    }
  })

  it('drains a host holding a hard anti-affinity member, a spread member and plain consumers: dry run, run, empty, every rule true, audit clean', async () => {
    for (const {what, args} of targets()) {
      await ok(['group', 'create', 'db', '--policy', 'anti-affinity', '--level', 'host', ...args])
      await ok(['group', 'create', 'web', '--policy', 'spread', '--level', 'rack', '--max-skew', '1', ...args])
      await claimOn(args, C('db', 1), 'cn-a1', 'VCPU:2,MEMORY_MB:2048', 'db')
      await claimOn(args, C('db', 2), 'cn-a2', 'VCPU:2,MEMORY_MB:2048', 'db')
      await claimOn(args, C('web', 1), 'cn-a1', 'VCPU:1,MEMORY_MB:1024', 'web')
      await claimOn(args, C('web', 2), 'cn-b1', 'VCPU:1,MEMORY_MB:1024', 'web')
      await claimOn(args, C('web', 3), 'cn-c1', 'VCPU:1,MEMORY_MB:1024', 'web')
      await claimOn(args, C('p', 1), 'cn-a1', 'VCPU:2,MEMORY_MB:1024', undefined, ['--project', 'other', '--user', 'someone'])
      await claimOn(args, C('p', 2), 'cn-a1', 'VCPU:1,MEMORY_MB:512')
      const before = await json(['allocation', 'show', C('p', 1), ...args])

      const dry = await ok(['drain', 'cn-a1', '--dry-run', ...args])
      expect(dry.stdout, what).toMatch(
        /^Dry run: drain cn-a1 \(4 consumers\): 4 would move; the host would be disabled first\. Nothing was changed\.$/m,
      )
      const to = (out: string, consumer: string) => new RegExp(`^${consumer} .* (would move|moved) +(\\S+)`, 'm').exec(out)?.[2]
      // The db member may not join its peer on cn-a2: the nearest host that keeps the rule (rack-b).
      expect(to(dry.stdout, C('db', 1))).toBe('cn-b1')
      // The spread member stays in rack-a (the counts per rack stay as they are); the rest as near.
      expect([C('web', 1), C('p', 1), C('p', 2)].map((c) => to(dry.stdout, c))).toEqual(['cn-a2', 'cn-a2', 'cn-a2'])
      expect(await json(['host', 'show', 'cn-a1', ...args])).toMatchObject({
        disabled: false,
        consumers: [C('db', 1), C('web', 1), C('p', 1), C('p', 2)].sort(),
      })

      const done = await ok(['drain', 'cn-a1', '--reason', 'replacing the PSU', ...args])
      expect(done.stdout).toMatch(/^Drained cn-a1: 4 of 4 consumers moved; host disabled \(replacing the PSU\)\.$/m)
      expect([C('db', 1), C('web', 1), C('p', 1), C('p', 2)].map((c) => to(done.stdout, c))).toEqual(['cn-b1', 'cn-a2', 'cn-a2', 'cn-a2'])
      expect(await json(['host', 'show', 'cn-a1', ...args])).toMatchObject({
        disabled: true,
        disabled_reason: 'replacing the PSU',
        consumers: [],
        used: {VCPU: 0, MEMORY_MB: 0},
      })
      // Each kept what it holds, its project, user, type (none for p1) and groups.
      const after = await json(['allocation', 'show', C('p', 1), ...args])
      expect(after).toMatchObject({
        project_id: 'other',
        user_id: 'someone',
        consumer_type: null,
        consumer_generation: before.consumer_generation + 1,
      })
      expect(Object.values(after.allocations).map((a: any) => a.resources)).toEqual([{VCPU: 2, MEMORY_MB: 1024}])
      expect(await json(['allocation', 'show', C('db', 1), ...args])).toMatchObject({
        project_id: 'proj',
        user_id: 'user',
        consumer_type: 'INSTANCE',
      })
      for (const g of ['db', 'web']) {
        expect((await ok(['group', 'show', g, ...args])).stdout, `${what}: group ${g}`).toContain('The rule holds.')
        expect((await json(['group', 'show', g, ...args])).violations).toEqual([])
      }
      expect((await ok(['audit', '--exit-code', ...args])).stdout).toMatch(/^No findings/)
      // Draining an empty, disabled host again is done at once.
      expect((await ok(['drain', 'cn-a1', ...args])).stdout).toBe('Drained cn-a1: 0 of 0 consumers moved; host already disabled.\n')
      // ... and changes nothing.
      const generation = (await json(['host', 'show', 'cn-a1', ...args])).generation
      expect(await json(['drain', 'cn-a1', ...args])).toMatchObject({
        host_status: 'already disabled',
        complete: true,
        changed: false,
        consumers: [],
      })
      expect((await json(['host', 'show', 'cn-a1', ...args])).generation).toBe(generation)
    }
  })

  it('a drain with no room elsewhere changes nothing, byte for byte, and says why (exit 4)', async () => {
    for (const {what, args, file} of targets()) {
      await ok(['host', 'enable', 'cn-a1', ...args])
      await claimOn(args, C('x', 1), 'cn-a1', 'VCPU:4')
      // Every other host full of VCPU.
      let i = 0
      for (const h of HOSTS.filter((n) => n !== 'cn-a1')) {
        const host = await json(['host', 'show', h, ...args])
        const free = host.capacity.VCPU - (host.used.VCPU ?? 0)
        if (free > 0) await claimOn(args, C('fill', ++i), h, `VCPU:${free}`)
      }
      const before = dumpDb(file)
      const dry = await ok(['drain', 'cn-a1', '--dry-run', ...args], 4)
      expect(dry.stdout, what).toMatch(
        new RegExp(`^${C('x', 1)} +VCPU=4 +cannot move +no other enabled host has room for VCPU=4 on one provider$`, 'm'),
      )
      expect(dry.stderr).toBe('placemat: dry run: the drain would not complete: 1 consumer cannot move off cn-a1 (nothing was changed)\n')
      const refused = await ok(['drain', 'cn-a1', ...args], 4)
      expect(refused.stdout).toMatch(/^Drain cn-a1 \(1 consumer\): 1 cannot move, so none was moved\. Nothing was changed\.$/m)
      expect(refused.stderr).toBe(
        'placemat: the drain cannot complete: 1 consumer cannot move off cn-a1; nothing was changed (--partial moves those that can)\n',
      )
      const report = await json(['drain', 'cn-a1'].concat(args), 4)
      expect(report).toMatchObject({complete: false, changed: false, consumers: [{consumer_uuid: C('x', 1), status: 'cannot move'}]})
      expect(dumpDb(file), what).toBe(before)
      expect(await json(['host', 'show', 'cn-a1', ...args])).toMatchObject({disabled: false, consumers: [C('x', 1)]})
    }
  })

  it('plain Placement: the trait without a reason (said on stderr), and a drain of plain consumers', async () => {
    const args = e.plain
    await ok(['apply', files.cloud, ...args])
    const off = await ok(['host', 'disable', 'cn-c2', '--reason', 'kept nowhere', ...args])
    expect(off.stderr).toBe('placemat: warning: plain Placement has nowhere to keep a reason: only COMPUTE_STATUS_DISABLED was set\n')
    expect(await json(['host', 'show', 'cn-c2', ...args])).toMatchObject({disabled: true, disabled_reason: null})
    expect((await ok(['provider', 'list', '-c', 'name,status', ...args])).stdout).toMatch(/^cn-c2 +disabled$/m)
    await claimOn(args, C('p', 1), 'cn-a1', 'VCPU:2')
    await claimOn(args, C('p', 2), 'cn-a1', 'VCPU:3', undefined, ['--project', 'other', '--user', 'someone'])
    const done = await ok(['drain', 'cn-a1', ...args])
    expect(done.stdout).toMatch(/^Drained cn-a1: 2 of 2 consumers moved; host disabled \(drained by placemat drain\)\.$/m)
    expect(await json(['host', 'show', 'cn-a1', ...args])).toMatchObject({disabled: true, consumers: []})
    expect(await json(['allocation', 'show', C('p', 2), ...args])).toMatchObject({project_id: 'other', user_id: 'someone'})
    expect((await ok(['host', 'enable', 'cn-c2', ...args])).stdout).toBe('Host cn-c2 enabled\n')
  })
})

describe('a move refused while the drain runs', () => {
  let e: Endpoints
  let file: string
  beforeAll(async () => {
    e = await startEndpoints('placemat-drain-race-')
    const files = writeCloud(e.dir)
    file = path.join(e.dir, 'r.db')
    await ok(['db', 'init', '--db', file])
    await ok(['apply', files.cloud, '--db', file])
    await ok(['topology', 'apply', files.layout, '--db', file])
  })
  afterAll(() => stopEndpoints(e))

  /** Runs the drain service on the file in process, `race` run just before its first move. */
  async function drainRacing(race: (c: PlacementClient) => Promise<void>, flags: {partial?: boolean} = {}) {
    const client = new PlacementClient(await LocalTransport.open(file))
    try {
      const backend = await chooseBackend(client, {local: true})
      return await drain(backend, 'cn-a1', {...flags, beforeFirstWrite: () => race(client)})
    } finally {
      await client.close()
    }
  }
  const take = (c: PlacementClient, consumer: string, host: string, vcpu: number) =>
    c.put(`/allocations/${consumer}`, {
      allocations: {[host]: {resources: {VCPU: vcpu}}},
      project_id: 'p',
      user_id: 'u',
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    })
  const uuidOf = async (name: string) => (await json(['provider', 'show', name, '--db', file])).uuid

  it('is planned once more on the cloud as it is then, and goes elsewhere', async () => {
    await claimOn(['--db', file], C('p', 1), 'cn-a1', 'VCPU:6')
    const a2 = await uuidOf('cn-a2')
    // Planned onto cn-a2 (same rack); someone takes cn-a2 first.
    const report = await drainRacing((c) => take(c, C('x', 1), a2, 4))
    expect(report.complete).toBe(true)
    expect(report.consumers).toMatchObject([{consumer_uuid: C('p', 1), status: 'moved', attempts: 2, to_host: {name: 'cn-b1'}}])
  })

  it('keeps what it holds when it still cannot move, and says why', async () => {
    await ok(['host', 'enable', 'cn-a1', '--db', file])
    await claimOn(['--db', file], C('p', 2), 'cn-a1', 'VCPU:6')
    const names = ['cn-a2', 'cn-b1', 'cn-b2', 'cn-c1', 'cn-c2']
    // Every other host filled before the first move: no room at all.
    const report = await drainRacing(async (c) => {
      let i = 10
      for (const n of names) {
        const host = await c.get<{capacity: Record<string, number>; used: Record<string, number>}>(`/placemat/v1/hosts/${await uuidOf(n)}`)
        const free = host.capacity.VCPU - (host.used.VCPU ?? 0)
        if (free > 0) await take(c, C('fill', ++i), await uuidOf(n), free)
      }
    })
    expect(report.complete).toBe(false)
    expect(report.consumers).toMatchObject([{consumer_uuid: C('p', 2), status: 'not moved', attempts: 1}])
    expect(report.consumers[0].why).toMatch(
      /^no other enabled host has room for VCPU=6 on one provider \(first refused: Unable to allocate inventory/,
    )
    const held = await json(['allocation', 'show', C('p', 2), '--db', file])
    expect(Object.values(held.allocations).map((a: any) => a.resources)).toEqual([{VCPU: 6}])
    expect(Object.keys(held.allocations)).toEqual([await uuidOf('cn-a1')])
  })

  it('says it changed nothing when the host was disabled already and no consumer moved', async () => {
    // cn-a1 stays disabled from the drain before, the rest full: --partial goes ahead and moves none.
    const report = await drainRacing(async () => {}, {partial: true})
    expect(report).toMatchObject({
      host_status: 'already disabled',
      complete: false,
      changed: false,
      consumers: [{consumer_uuid: C('p', 2), status: 'cannot move'}],
    })
  })
})
