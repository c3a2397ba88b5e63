/**
 * `placemat make-room` and `placemat drain rack:NAME` on the real binary, against a daemon, a
 * file (--db) and plain Placement: the hand-sized cloud of docs/cli/make-room.md
 * (fixtures/make-room/: six hosts of 16 VCPU two to a rack, 16 small instances), its plan as a
 * table, JSON and `-f value` lines, carried out with --apply (capacity then counts what the plan
 * said; audit finds nothing), a rack drained, and a goal that cannot be reached changing nothing.
 * In process on a daemon: a plan carried out while other clients claim in the same rack and on
 * its moves' targets: refused moves planned again, nothing overfilled, every move done or named.
 */
import fs from 'node:fs'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import type {PlacementClient} from '../../src/client/client.js'
import {chooseBackend} from '../../src/cli/backend/choose.js'
import {chosenFlavors} from '../../src/cli/services/capacity.js'
import {makeRoom} from '../../src/cli/services/make-room.js'
import {parseFlavors} from '../../src/core/headroom/flavor-file.js'
import {dumpDb, placemat as run, type Result} from '../helpers/db-tools.js'
import {onFile, startEndpoints, stopEndpoints, type Endpoints} from '../helpers/endpoints.js'

const FIXTURES = 'fixtures/make-room'
const FLAVORS = path.join(FIXTURES, 'flavors.yaml')
/** Small instances (2 VCPU, 4 GiB, 20 GB) per host: rack r1 is full enough that no m1.xlarge fits. */
const SMALLS: Array<[string, number]> = [
  ['h1', 5],
  ['h2', 5],
  ['h3', 2],
  ['h5', 3],
  ['h6', 1],
]
const C = (i: number) => `c0000000-0000-4000-8000-${String(i).padStart(12, '0')}`

async function ok(args: string[], code = 0): Promise<Result> {
  const r = await run(args)
  expect(r.code, `placemat ${args.join(' ')}\n${r.stderr}\n${r.stdout.slice(0, 3000)}`).toBe(code)
  return r
}
const json = async (args: string[], code = 0) => JSON.parse((await ok([...args, '--json'], code)).stdout)

/** The hand-sized cloud's hosts and layout on `args`' endpoint (plain Placement: its racks' aggregates). */
async function hosts(args: string[]): Promise<void> {
  await ok(['apply', path.join(FIXTURES, 'cloud.yaml'), ...args])
  await ok(['topology', 'apply', path.join(FIXTURES, 'layout.yaml'), ...args])
}

/** Its 16 instances, written through `client`. */
async function instances(client: PlacementClient): Promise<void> {
  const hosts = (await client.get<{resource_providers: Array<{name: string; uuid: string}>}>('/resource_providers')).resource_providers
  const uuid = new Map(hosts.map((h) => [h.name, h.uuid]))
  let i = 0
  for (const [host, n] of SMALLS)
    for (let k = 0; k < n; k++)
      await client.put(`/allocations/${C(++i)}`, {
        allocations: {[uuid.get(host)!]: {resources: {VCPU: 2, MEMORY_MB: 4096, DISK_GB: 20}}},
        project_id: 'demo',
        user_id: 'ops',
        consumer_generation: null,
        consumer_type: 'INSTANCE',
      })
}

const r1Fit = async (args: string[]) =>
  (await json(['capacity', '--flavors', FLAVORS, '--flavor', 'm1.xlarge', '--level', 'rack', ...args])).domains.find(
    (d: {name: string}) => d.name === 'r1',
  ).fit

describe('placemat make-room and drain rack:NAME', () => {
  let e: Endpoints
  beforeAll(async () => {
    e = await startEndpoints('placemat-make-room-')
    await ok(['db', 'init', '--db', path.join(e.dir, 'f.db')])
  })
  afterAll(() => stopEndpoints(e))

  const targets = () => [
    {args: e.daemon, client: e.daemonClient, plain: false},
    {args: ['--db', path.join(e.dir, 'f.db')], client: null, plain: false},
    {args: e.plain, client: e.plainClient, plain: true},
  ]

  for (const which of [0, 1, 2])
    it(`${['a daemon', 'a file', 'plain Placement'][which]}: plans, prints, applies, drains a rack, and refuses what cannot be`, async () => {
      const t = targets()[which]
      // Plain Placement keeps no names for its racks' aggregates: the layout file gives them.
      const layout = t.plain ? ['--layout', path.join(FIXTURES, 'layout.yaml')] : []
      const args = [...t.args, ...layout]
      await hosts(t.args)
      if (t.client) await instances(t.client)
      else await onFile(path.join(e.dir, 'f.db'), instances)
      const ask = ['make-room', '--flavors', FLAVORS, '--flavor', 'm1.xlarge', '--count', '2', '--in', 'rack:r1', ...args]

      // The dry run: one small instance off each host of r1, the fewest (the bound says so).
      const plan = await json(ask)
      expect(plan).toMatchObject({
        goal: 'flavor',
        possible: true,
        applied: false,
        fit_before: 0,
        fit_after: 2,
        lower_bound: 2,
        proof: 'bound',
      })
      expect(plan.moves.map((m: {from: string}) => m.from).sort()).toEqual(['h1', 'h2'])
      for (const m of plan.moves) expect(['h1', 'h2']).not.toContain(m.to)
      expect(plan.domains).toContainEqual({level: 'rack', name: 'r1', before: 0, after: 2})
      const table = await ok(ask)
      // docs/cli/make-room.md shows this very answer.
      expect(fs.readFileSync('docs/cli/make-room.md', 'utf8')).toContain(table.stdout.trim())
      expect(table.stdout).toMatch(
        /^Dry run: 2 more m1\.xlarge in rack r1: 2 moves, the fewest, as the lower bound shows .*: 0 m1\.xlarge fit now, 2 m1\.xlarge fit after\. Nothing was changed/m,
      )
      const lines = (await ok([...ask, '-f', 'value', '-c', 'consumer', '-c', 'from', '-c', 'to'])).stdout.trim().split('\n')
      expect(lines).toEqual(plan.moves.map((m: {consumer: string; from: string; to: string}) => `${m.consumer} ${m.from} ${m.to}`))
      expect(await r1Fit(args)).toBe(0)

      // Carried out: capacity then counts what the plan said.
      const done = await json([...ask, '--apply'])
      expect(done).toMatchObject({applied: true, complete: true, fit_now: 2, replans: 0})
      expect(done.moves.map((m: {status: string}) => m.status)).toEqual(['moved', 'moved'])
      expect(await r1Fit(args)).toBe(2)
      expect((await ok(ask)).stdout).toMatch(/already so \(2 m1\.xlarge fit\); no move is needed/)

      // A rack drained: its hosts out of service and empty, every consumer elsewhere.
      const drained = await json(['drain', 'rack:r1', ...args])
      expect(drained).toMatchObject({goal: 'drain', applied: true, complete: true, fit_now: 0, disabled_hosts: ['h1', 'h2']})
      expect(drained.moves).toHaveLength(8)
      for (const h of ['h1', 'h2']) expect(await json(['host', 'show', h, ...t.args])).toMatchObject({disabled: true, consumers: []})
      if (!t.plain) expect((await ok(['audit', ...args])).stdout).toMatch(/^No findings/m)

      // More than the cloud holds: exit 4, why, nothing changed.
      const before = t.client ? null : dumpDb(path.join(e.dir, 'f.db'))
      const no = await ok(['make-room', '--flavors', FLAVORS, '--flavor', 'm1.xlarge', '--count', '9', '--in', 'rack:r3', ...args], 4)
      expect(no.stdout).toMatch(/9 more m1\.xlarge in rack r3: not possible\. .*VCPU binds/)
      expect(no.stderr).toMatch(/VCPU binds \(nothing was changed\)/)
      if (before) expect(dumpDb(path.join(e.dir, 'f.db'))).toEqual(before)
    })

  it('free hosts: the emptiest emptied first, and the usage errors', async () => {
    const args = ['--db', path.join(e.dir, 'f.db')]
    const free = await json(['make-room', '--free-hosts', '4', ...args])
    expect(free).toMatchObject({goal: 'free_hosts', possible: true, fit_before: 2})
    await ok(['make-room', '--flavor', 'm1.xlarge', '--count', '1', ...args], 2)
    await ok(['make-room', '--free-hosts', '1', '--in', 'aisle:7', ...args], 2)
    expect((await ok(['make-room', '--free-hosts', '1', '--in', 'rack:nowhere', ...args], 3)).stderr).toMatch(/rack named nowhere/)
  })
})

describe('make-room --apply while other clients claim in the same rack', () => {
  let e: Endpoints
  beforeAll(async () => {
    e = await startEndpoints('placemat-make-room-churn-')
    await hosts(e.daemon)
    await instances(e.daemonClient)
  })
  afterAll(() => stopEndpoints(e))

  it('plans again when a move is refused or its room is taken: nothing overfilled, every move done or named', async () => {
    const c = e.daemonClient
    const uuid = new Map(
      (await c.get<{resource_providers: Array<{name: string; uuid: string}>}>('/resource_providers')).resource_providers.map((h) => [
        h.name,
        h.uuid,
      ]),
    )
    const flavor = chosenFlavors(parseFlavors(fs.readFileSync(FLAVORS, 'utf8'), FLAVORS), ['m1.xlarge'])[0]
    const backend = await chooseBackend(c, {local: false})
    let others = 0
    const claim = async (host: string, vcpu: number) => {
      try {
        await c.put(`/allocations/eeeeeeee-0000-4000-8000-${String(++others).padStart(12, '0')}`, {
          allocations: {[uuid.get(host)!]: {resources: {VCPU: vcpu}}},
          project_id: 'rival',
          user_id: 'rival',
          consumer_generation: null,
          consumer_type: 'INSTANCE',
        })
      } catch {
        // The rack was full for them too.
      }
    }
    let filled = false
    let took = false
    const report = await makeRoom(backend, {goal: 'flavor', flavor: 'm1.xlarge', count: 3, in: {level: 'rack', name: 'r1'}}, flavor, {
      apply: true,
      beforeMove: async (move, done) => {
        // Before the first move, someone fills the host it goes to (the write is refused); after
        // two moves, someone takes room on h1, which the plan frees (the plan then falls short).
        if (!filled) {
          filled = true
          await claim(move.to, 16 - (await usedVcpu(c, uuid.get(move.to)!)))
        }
        if (done === 2 && !took) {
          took = true
          await claim('h1', 2)
        }
      },
    })
    expect(report).toMatchObject({complete: true, fit_now: 3})
    expect(report.replans).toBeGreaterThanOrEqual(2)
    for (const m of report.moves) expect(m.status === 'moved' || (m.status === 'not moved' && m.why)).toBeTruthy()
    // Nothing overfilled anywhere.
    for (const [, rp] of uuid) expect(await usedVcpu(c, rp)).toBeLessThanOrEqual(16)
    // The goal reached in spite of them, or said not to be.
    expect(report.fit_now).toBe(await r1Fit(e.daemon))
    expect((await ok(['audit', ...e.daemon])).stdout).toMatch(/^No findings/m)
  })
})

async function usedVcpu(c: PlacementClient, rp: string): Promise<number> {
  return (await c.get<{usages: Record<string, number>}>(`/resource_providers/${rp}/usages`)).usages.VCPU ?? 0
}
