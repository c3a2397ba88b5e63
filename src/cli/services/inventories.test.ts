/**
 * setInventories against a fake Placement (no process, no HTTP): the merge, the warning below
 * what is in use, the dry run and the retry on a generation conflict.
 */
import {describe, expect, it} from 'vitest'
import {ErrorCode} from '../../core/errors.js'
import {fakePlacement, refusal} from '../../../test/helpers/fake-backend.js'
import {setInventories} from './inventories.js'
import {collectChanges} from './inventory.js'

const UUID = '11111111-2222-3333-4444-555555555555'

/** Provider c1 at generation 3 using 6 VCPU; its writes refused `conflicts` times first, as another writer's would be. */
function fakeClient(opts: {conflicts?: number; inventories?: Record<string, unknown>} = {}) {
  let generation = 3
  let conflicts = opts.conflicts ?? 0
  const puts: Array<{resource_provider_generation: number; inventories: unknown}> = []
  const classes: string[] = []
  const {client} = fakePlacement(({method, path, body}) => {
    if (method === 'PUT' && path.startsWith('/resource_classes/')) {
      classes.push(decodeURIComponent(path.slice('/resource_classes/'.length)))
      return {status: 201}
    }
    if (method === 'PUT' && path.endsWith('/inventories')) {
      const put = body as {resource_provider_generation: number; inventories: unknown}
      puts.push(put)
      generation++
      if (conflicts-- > 0) return {status: 409, body: refusal('resource provider generation conflict', ErrorCode.CONCURRENT_UPDATE)}
      return {body: {resource_provider_generation: generation, inventories: put.inventories}}
    }
    if (method !== 'GET') return undefined
    if (path === `/resource_providers/${UUID}`) return {body: {uuid: UUID, name: 'c1', generation}}
    if (path.endsWith('/inventories'))
      return {
        body: {resource_provider_generation: generation, inventories: opts.inventories ?? {VCPU: {total: 8}, MEMORY_MB: {total: 1024}}},
      }
    if (path.endsWith('/usages')) return {body: {usages: {VCPU: 6}}}
    if (path === '/resource_classes')
      return {body: {resource_classes: ['VCPU', 'MEMORY_MB', 'DISK_GB', ...classes].map((name) => ({name}))}}
    return undefined
  })
  return {client, puts, classes}
}

describe('setInventories', () => {
  it('replaces without --amend, keeps the others with it, and warns below what is in use', async () => {
    const {client} = fakeClient()
    const warnings: string[] = []
    const [r] = await setInventories(client, UUID, collectChanges(['VCPU=4'], {}), {onWarning: (m) => warnings.push(m)})
    expect(Object.keys(r.body.inventories)).toEqual(['VCPU'])
    expect(warnings).toEqual(['VCPU on c1: capacity 4 would be below what is in use (6)'])
    const [amended] = await setInventories(client, UUID, collectChanges(['VCPU=16'], {}), {amend: true})
    expect(Object.keys(amended.body.inventories).sort()).toEqual(['MEMORY_MB', 'VCPU'])
  })

  it('writes nothing on a dry run, and reads again after a generation conflict', async () => {
    const dry = fakeClient()
    const [r] = await setInventories(dry.client, UUID, collectChanges(['VCPU=16'], {}), {dryRun: true})
    expect(dry.puts).toEqual([])
    expect(r.body.resource_provider_generation).toBe(3)
    const busy = fakeClient({conflicts: 1})
    const [w] = await setInventories(busy.client, UUID, collectChanges(['VCPU=16'], {}), {amend: true})
    expect(busy.puts.map((p) => p.resource_provider_generation)).toEqual([3, 4])
    expect(w.body.resource_provider_generation).toBe(5)
  })

  it('a dry run says what replacing all inventories would lose: each class dropped, each field reset to its default', async () => {
    const {client, puts} = fakeClient({
      inventories: {
        VCPU: {total: 32, reserved: 2, min_unit: 1, max_unit: 16, step_size: 1, allocation_ratio: 4},
        MEMORY_MB: {total: 1024, reserved: 0, min_unit: 1, max_unit: 1024, step_size: 1, allocation_ratio: 1.5},
      },
    })
    const [r] = await setInventories(client, UUID, collectChanges(['VCPU=48'], {}), {dryRun: true})
    expect(puts).toEqual([])
    expect(r.name).toBe('c1')
    expect(r.replaced).toEqual({
      dropped: [{resource_class: 'MEMORY_MB', total: 1024}],
      reset: [
        {resource_class: 'VCPU', field: 'reserved', from: 2, to: 0},
        {resource_class: 'VCPU', field: 'max_unit', from: 16, to: 2147483647},
        {resource_class: 'VCPU', field: 'allocation_ratio', from: 4, to: 1},
      ],
    })
    // With --amend nothing is lost.
    const [amended] = await setInventories(client, UUID, collectChanges(['VCPU=48'], {}), {dryRun: true, amend: true})
    expect(amended.replaced).toEqual({dropped: [], reset: []})
  })

  it('makes a custom class the inventory names, names it in a dry run, and refuses a class that is neither, dry or not', async () => {
    const real = fakeClient()
    const [r] = await setInventories(real.client, UUID, collectChanges(['CUSTOM_FPGA=4'], {}), {amend: true})
    expect([real.classes, r.classesMade]).toEqual([['CUSTOM_FPGA'], ['CUSTOM_FPGA']])
    const dry = fakeClient()
    const [d] = await setInventories(dry.client, UUID, collectChanges(['CUSTOM_FPGA=4'], {}), {amend: true, dryRun: true})
    expect([dry.classes, dry.puts, d.classesMade]).toEqual([[], [], ['CUSTOM_FPGA']])
    for (const dryRun of [false, true]) {
      const f = fakeClient()
      await expect(setInventories(f.client, UUID, collectChanges(['VCPUS=4'], {}), {dryRun})).rejects.toMatchObject({
        kind: 'bad_request',
        message: expect.stringContaining('no resource class VCPUS'),
      })
      expect([f.classes, f.puts]).toEqual([[], []])
    }
  })
})
