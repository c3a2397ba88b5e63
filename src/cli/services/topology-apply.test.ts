/**
 * applyLayoutFile against a fake backend (no process, no HTTP): a file that names nothing refused
 * before a backend is chosen unless pruning; the file's generation applied unless one is given;
 * the plan handed on with the file's layout; the errors an apply ends with saying what to do.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {ApiError} from '../../client/client.js'
import {AFFINITY_VIOLATION, ErrorCode} from '../../core/errors.js'
import type {TopologyPlan} from '../../core/topology.js'
import {fakeBackend} from '../../../test/helpers/fake-backend.js'
import type {LayoutApplyOptions} from '../backend/backend.js'
import {exitCodeOf} from '../failure.js'
import {applyLayoutFile} from './topology-apply.js'

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-topology-apply-'))
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

const file = (name: string, text: string) => {
  const f = path.join(dir, name)
  fs.writeFileSync(f, text)
  return f
}

const PLAN: TopologyPlan = {
  generation: 7,
  nodes: {create: ['rack r1'], update: [], delete: []},
  hosts: {add: ['cn1'], move: [], remove: []},
  violations: [],
}

/** A backend that plans PLAN, notes the options it was given, and then answers with `end`. */
function backendOf(end: (opts: LayoutApplyOptions) => Promise<void> = async () => undefined) {
  const given: LayoutApplyOptions[] = []
  const backend = fakeBackend({
    async applyLayout(_layout, opts = {}) {
      given.push(opts)
      opts.onPlan?.(PLAN)
      await end(opts)
      return {transport: 'placemat', plan: PLAN, applied: !opts.dryRun, writes: 1}
    },
  })
  return {backendOf: async () => backend, given}
}

const conflict = () => new ApiError(409, 'topology generation conflict', ErrorCode.CONCURRENT_UPDATE, 'PUT', '/layout')

describe('topology apply', () => {
  it('refuses a file that names no rack, row or room (exit 2) before a backend is chosen, unless it prunes', async () => {
    const empty = file('empty.yaml', 'racks: []\n')
    const never = async () => {
      throw new Error('no backend should be chosen')
    }
    const err = await applyLayoutFile(never, empty).catch((e) => e)
    expect([exitCodeOf(err), err.message]).toEqual([
      2,
      `${empty} names no rack, row or room: without --prune that changes nothing; to empty the topology, give --prune`,
    ])
    const b = backendOf()
    await applyLayoutFile(b.backendOf, empty, {prune: true})
    expect(b.given[0].prune).toBe(true)
  })

  it("applies at the file's generation unless one is given, and hands on the plan with the file's layout", async () => {
    const layout = file('layout.yaml', 'generation: 3\nracks:\n  - name: r1\n    hosts: [cn1]\n')
    const planned: string[] = []
    const b = backendOf()
    const out = await applyLayoutFile(b.backendOf, layout, {
      onPlan: (plan, doc) => planned.push(`${plan.generation} ${doc.racks?.[0].name}`),
    })
    await applyLayoutFile(b.backendOf, layout, {generation: 5})
    expect(b.given.map((o) => o.generation)).toEqual([3, 5])
    expect(planned).toEqual(['7 r1'])
    expect([out.res.applied, out.refusal, out.seconds >= 0]).toEqual([true, undefined, true])
  })

  it('says a topology changed since the plan was made as worth running again, and a stale pinned generation as not', async () => {
    const layout = file('plain.yaml', 'racks:\n  - name: r1\n')
    const raced = await applyLayoutFile(backendOf(async () => Promise.reject(conflict())).backendOf, layout).catch((e) => e)
    expect([exitCodeOf(raced), raced.detail]).toEqual([
      4,
      'the topology changed since the plan was made: topology generation conflict; nothing was applied (run again)',
    ])
    const pinned = await applyLayoutFile(backendOf(async () => Promise.reject(conflict())).backendOf, layout, {generation: 2}).catch(
      (e) => e,
    )
    expect(pinned.detail).toBe(
      'the topology changed since the file was read: topology generation conflict; nothing was applied. --generation is stale: read the layout again (placemat topology layout), or drop the generation to apply over the change',
    )
  })

  it("gives a dry run's refusal for a group rule with how to go ahead anyway", async () => {
    const layout = file('group.yaml', 'racks:\n  - name: r1\n')
    const breach = new ApiError(409, 'Placement group rule violated: web', AFFINITY_VIOLATION, 'PUT', '/layout')
    const backend = fakeBackend({
      async applyLayout(_layout, opts = {}) {
        return {transport: 'placemat', plan: PLAN, applied: false, writes: 0, refusal: opts.dryRun ? breach : undefined}
      },
    })
    const out = await applyLayoutFile(async () => backend, layout, {dryRun: true})
    expect(out.refusal?.detail).toBe('Placement group rule violated: web (nothing was changed; --allow-violations to go ahead anyway)')
  })
})
