// setInventories on a fake endpoint: the merge, the warning below what is in use, the dry run
// and the retry on a generation conflict, without a daemon.
import {describe, expect, it} from 'vitest'
import {ApiError, type PlacementClient} from '../../src/client/client.js'
import {collectChanges} from '../../src/cli/services/inventory.js'
import {setInventories} from '../../src/cli/services/inventories.js'

const UUID = '11111111-2222-3333-4444-555555555555'

function fakeClient(opts: {conflicts?: number; inventories?: Record<string, unknown>} = {}) {
  let generation = 3
  let conflicts = opts.conflicts ?? 0
  const puts: unknown[] = []
  const classes: string[] = []
  const client = {
    async request(method: string, path: string) {
      if (method !== 'PUT' || !path.startsWith('/resource_classes/')) throw new Error(`unexpected ${method} ${path}`)
      classes.push(decodeURIComponent(path.slice('/resource_classes/'.length)))
      return {status: 201, body: null, headers: {}}
    },
    async get(path: string) {
      if (path === `/resource_providers/${UUID}`) return {uuid: UUID, name: 'c1', generation}
      if (path.endsWith('/inventories'))
        return {resource_provider_generation: generation, inventories: opts.inventories ?? {VCPU: {total: 8}, MEMORY_MB: {total: 1024}}}
      if (path.endsWith('/usages')) return {usages: {VCPU: 6}}
      if (path === '/resource_classes') return {resource_classes: ['VCPU', 'MEMORY_MB', 'DISK_GB', ...classes].map((name) => ({name}))}
      throw new Error(`unexpected GET ${path}`)
    },
    async put(path: string, body: {resource_provider_generation: number; inventories: unknown}) {
      puts.push(body)
      if (conflicts-- > 0) {
        generation++
        throw new ApiError(409, 'resource provider generation conflict', 'placement.concurrent_update', 'PUT', path)
      }
      generation++
      return {resource_provider_generation: generation, inventories: body.inventories}
    },
  }
  return {client: client as unknown as PlacementClient, puts, classes}
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
    expect(busy.puts.map((p: any) => p.resource_provider_generation)).toEqual([3, 4])
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

  it('echoes a number out of range as it was typed, not rounded', () => {
    expect(() => collectChanges(['VCPU=99999999999999999999'], {})).toThrow(
      'VCPU=99999999999999999999: total must be 1 to 2147483647, not 99999999999999999999',
    )
  })
})
