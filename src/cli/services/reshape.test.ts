/**
 * runReshape against a fake backend and a fake Placement (no process, no HTTP): a move plan read
 * and compiled against the cloud as it is, a dry run reporting the new child and the allocation
 * that moves while writing nothing, a run handing the checked reshape to the backend, a plan
 * already in place done, and a dry run's failure said as a prediction.
 */
import {describe, expect, it} from 'vitest'
import type {CompiledReshape} from '../../core/reshape/compiled.js'
import {fakeBackend, fakePlacement} from '../../../test/helpers/fake-backend.js'
import {inv} from '../../../test/helpers/records.js'
import type {ReshapePlanFile} from '../formats/reshape-plan.js'
import type {ReshapeReport} from '../render/reshape-report.js'
import {dryRunFailure, runReshape} from './reshape.js'

const CN1 = '00000000-0000-4000-8000-000000000001'
const GPU = '00000000-0000-4000-8000-000000000002'
const VM = 'cccccccc-0000-4000-8000-000000000001'

/** cn1 with 8 VCPU and 2 VGPU, VM holding 2 VCPU and 1 VGPU of it; with `moved`, the VGPU is on its child cn1-gpu0 already. */
function cloud(moved = false) {
  const cn1 = {uuid: CN1, name: 'cn1', generation: 4, root_provider_uuid: CN1, parent_provider_uuid: null}
  const gpu = {uuid: GPU, name: 'cn1-gpu0', generation: 1, root_provider_uuid: CN1, parent_provider_uuid: CN1}
  const vm = moved ? {[CN1]: {resources: {VCPU: 2}}, [GPU]: {resources: {VGPU: 1}}} : {[CN1]: {resources: {VCPU: 2, VGPU: 1}}}
  return fakePlacement(({path}) => {
    if (path === '/resource_providers?name=cn1') return {body: {resource_providers: [cn1]}}
    if (path === '/resource_providers?name=cn1-gpu0') return {body: {resource_providers: moved ? [gpu] : []}}
    if (path === '/resource_classes') return {body: {resource_classes: [{name: 'VCPU'}, {name: 'VGPU'}]}}
    if (path === `/resource_providers?in_tree=${CN1}`) return {body: {resource_providers: moved ? [cn1, gpu] : [cn1]}}
    if (path === `/resource_providers/${CN1}/inventories`)
      return {body: {inventories: moved ? {VCPU: inv(8)} : {VCPU: inv(8), VGPU: inv(2)}}}
    if (path === `/resource_providers/${GPU}/inventories`) return {body: {inventories: {VGPU: inv(2)}}}
    if (path === `/resource_providers/${CN1}/allocations`)
      return {body: {allocations: {[VM]: {resources: vm[CN1].resources, consumer_generation: 3}}}}
    if (path === `/resource_providers/${GPU}/allocations`)
      return {body: {allocations: {[VM]: {resources: {VGPU: 1}, consumer_generation: 3}}}}
    if (path === `/allocations/${VM}`) return {body: {allocations: vm, project_id: 'p', user_id: 'u', consumer_generation: 3}}
    return undefined
  })
}

const plan: ReshapePlanFile = {kind: 'moves', moves: [{from: 'cn1', to: 'cn1-gpu0', parent: 'cn1', resources: {VGPU: 'all'}}]}

describe('reshape', () => {
  it('a dry run reports the new child and the allocation that moves with the inventory, and writes nothing', async () => {
    const {client, calls} = cloud()
    const report = await runReshape(fakeBackend({client}), plan, {dryRun: true})
    expect(report.creates.map((c) => [c.name, c.parent_provider_uuid])).toEqual([['cn1-gpu0', CN1]])
    expect([report.dry_run, report.applied, report.error, report.conflicts]).toEqual([true, false, null, []])
    const allocations = report.body.allocations?.[VM]?.allocations ?? {}
    expect(Object.values(allocations).map((a) => a.resources)).toEqual([{VCPU: 2}, {VGPU: 1}])
    expect(calls.every((c) => c.method === 'GET')).toBe(true)
  })

  it('hands the checked reshape to the backend, at the microversion it needs, and says whether it was one transaction', async () => {
    const {client} = cloud()
    const written: Array<[CompiledReshape, string]> = []
    const backend = fakeBackend({
      client,
      async reshape(compiled, microversion) {
        written.push([compiled, microversion])
        return true
      },
    })
    const report = await runReshape(backend, plan, {dryRun: false})
    expect([report.applied, report.atomic, written.length, written[0][1]]).toEqual([true, true, 1, '1.37'])
    expect(written[0][0].creates.map((c) => c.name)).toEqual(['cn1-gpu0'])
  })

  it('takes a plan whose moves are in place already as done, asking the backend to write nothing', async () => {
    const report = await runReshape(fakeBackend({client: cloud(true).client}), plan, {dryRun: false})
    expect([report.done, report.applied]).toEqual([true, false])
  })

  it("says a dry run's failure as what the real run would end with", () => {
    const failed = {dry_run: true, error: {status: 409, detail: 'VGPU in use', code: 'placement.inventory.inuse'}} as ReshapeReport
    expect(dryRunFailure(failed)).toMatchObject({
      status: 409,
      detail: 'the reshape would fail: VGPU in use',
      code: 'placement.inventory.inuse',
    })
    expect(dryRunFailure({...failed, dry_run: false})).toBeNull()
  })
})
