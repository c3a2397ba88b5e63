/**
 * applyFile() against fake backends (no process, no HTTP): a dry run checks and writes nothing;
 * a backend that writes in one transaction takes the providers and the layout in one write;
 * one that makes calls takes the operations, then the layout, and a failing call says how many
 * were made; aggregate names a backend cannot keep are warned of.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {ApiError, PlacementClient} from '../../client/client.js'
import type {TopologyPlan} from '../../core/topology.js'
import type {Backend, LayoutApplyOptions, OperationPlan, Progress} from '../backend/backend.js'
import {applyFile} from './apply.js'
import {fakeBackend} from '../../../test/helpers/fake-backend.js'

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-apply-'))
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

/** A datacenter file: cn1 and cn2 with VCPU, in aggregate `agg` (by name), and rack r1 when `rack`. */
function datacenter(opts: {rack?: boolean} = {}): string {
  const file = path.join(dir, `cloud-${Math.random().toString(16).slice(2)}.yaml`)
  const providers = ['cn1', 'cn2'].map((n) => `  - name: ${n}\n    inventories: {VCPU: 8}\n    aggregates: [agg]\n`).join('')
  fs.writeFileSync(file, `providers:\n${providers}${opts.rack ? 'racks:\n  - name: r1\n    hosts: [cn1, cn2]\n' : ''}`)
  return file
}

/** An empty cloud that knows the standard classes. */
const placement = new PlacementClient({
  description: 'fake',
  async send(_method, p) {
    if (p === '/resource_classes') return {status: 200, body: {resource_classes: [{name: 'VCPU'}]}, headers: {}}
    if (p === '/traits') return {status: 200, body: {traits: []}, headers: {}}
    return {status: 404, body: {errors: [{detail: `nothing at ${p}`}]}, headers: {}}
  },
  close: async () => undefined,
})

const layoutPlan: TopologyPlan = {
  generation: 1,
  nodes: {create: ['rack r1'], update: [], delete: []},
  hosts: {add: ['cn1'], move: [], remove: []},
  violations: [],
}

/** A backend on an empty cloud noting what it is asked to write; `transaction`: placemat's one-transaction writes. */
function fake(opts: {transaction: boolean; failAfter?: number}) {
  const did: string[] = []
  const backend = fakeBackend({
    kind: opts.transaction ? 'placemat' : 'placement',
    client: placement,
    oneTransaction: opts.transaction,
    async loadCloud() {
      return {providers: new Map()}
    },
    async topologyNodes() {
      return []
    },
    ...(opts.transaction
      ? {
          async namedAggregates() {
            return []
          },
          async applyWithLayout(plan: OperationPlan) {
            did.push(`operations and layout: ${plan.operationCount}`)
            return layoutPlan
          },
        }
      : {}),
    async applyOperations(plan: OperationPlan, o: {onProgress?: Progress}) {
      for (let i = 1; i <= plan.operationCount; i++) {
        if (i === opts.failAfter) throw new ApiError(400, 'refused', undefined, 'PUT', '/x')
        o.onProgress?.(i, plan.operationCount, '')
      }
      did.push(`operations: ${plan.operationCount}`)
      return plan.operationCount
    },
    async applyLayout(_layout: unknown, o: LayoutApplyOptions) {
      o.onPlan?.(layoutPlan as never)
      did.push(o.dryRun ? 'layout dry run' : 'layout')
      return {transport: 'placement', plan: layoutPlan, applied: !o.dryRun, writes: 1}
    },
  })
  return {backend, did}
}

const run = (backend: Backend, file: string, opts: {dryRun?: boolean} = {}, warnings: string[] = []) =>
  applyFile(async () => backend, file, {...opts, warn: (m) => warnings.push(m)})

describe('applyFile', () => {
  it('a dry run plans and checks, and writes nothing', async () => {
    const f = fake({transaction: false})
    const out = await run(f.backend, datacenter(), {dryRun: true})
    expect(out.plan.summary.create).toBe(2)
    expect([out.dryRun, out.applied, out.seconds, f.did]).toEqual([true, false, undefined, []])
  })

  it('on a backend that writes in one transaction, the providers and the layout go in one write', async () => {
    const f = fake({transaction: true})
    const out = await run(f.backend, datacenter({rack: true}))
    expect(f.did).toEqual([`operations and layout: ${out.plan.operationCount}`])
    expect([out.applied, out.topology?.applied, out.transport]).toEqual([true, true, 'placemat'])
    expect(out.seconds).toBeTypeOf('number')
  })

  it('on a backend that makes calls, the operations first and the layout after them', async () => {
    const f = fake({transaction: false})
    const out = await run(f.backend, datacenter({rack: true}))
    expect(f.did).toEqual([`operations: ${out.plan.operationCount}`, 'layout'])
    expect(out.topology).toEqual({plan: layoutPlan, applied: true})
  })

  it('a call that fails says how many were made before it, and the layout is not applied', async () => {
    const f = fake({transaction: false, failAfter: 3})
    const err = await run(f.backend, datacenter({rack: true})).catch((e) => e)
    expect(err.detail).toMatch(/^refused \(2 of \d+ calls were made before this one failed; apply again to finish\)$/)
    expect(f.did).toEqual([])
  })

  it('warns that a backend keeping no aggregate names does not keep the file’s', async () => {
    const warnings: string[] = []
    await run(fake({transaction: false}).backend, datacenter(), {dryRun: true}, warnings)
    expect(warnings).toEqual([
      'plain OpenStack Placement keeps no aggregate names: the name the file gives aggregates is not kept (listings show their uuids)',
    ])
  })
})
