/**
 * exportSnapshot against a fake backend and a fake Placement (no process, no HTTP): placemat's
 * own lists and records read with Placement's, in the snapshot's order; the whole read made again
 * when a provider's generation moved meanwhile, and refused (exit 4) when no pass was quiet;
 * plain Placement's snapshot said to keep nothing of placemat's.
 */
import {describe, expect, it} from 'vitest'
import type {ConsumerRecord, ProviderRecord} from '../../core/wire.js'
import {fakeBackend, fakePlacement} from '../../../test/helpers/fake-backend.js'
import {inv} from '../../../test/helpers/records.js'
import type {Backend} from '../backend/backend.js'
import {exitCodeOf} from '../failure.js'
import {exportSnapshot, placematOnly} from './state-export.js'

const CN1 = '00000000-0000-4000-8000-000000000002'
const NUMA = '00000000-0000-4000-8000-000000000001'
const C1 = 'cccccccc-0000-4000-8000-000000000001'
const C2 = 'cccccccc-0000-4000-8000-000000000002'

const provider = (uuid: string, name: string, parent: string | null, traits: string[] = []): ProviderRecord => ({
  uuid,
  name,
  generation: 1,
  parent_provider_uuid: parent,
  root_provider_uuid: parent ?? uuid,
  inventories: parent ? {} : {VCPU: inv(8)},
  usages: {},
  traits,
  aggregates: [],
})

/**
 * A placemat backend of cn1 (out of service, with a reason) and its child listed first, C1
 * holding VCPU and C2 nothing, and rack r1; cn1's generation moves on each of the first `moves`
 * lists of the providers after a read.
 */
function cloud(moves = 0): {backend: Backend; reads: () => number} {
  let generation = 1
  let lists = 0
  let reads = 0
  const {client} = fakePlacement(({path}) => {
    if (path === '/resource_classes') return {body: {resource_classes: [{name: 'VCPU'}, {name: 'CUSTOM_FPGA'}]}}
    if (path.startsWith('/traits?')) return {body: {traits: ['CUSTOM_GOLD']}}
    if (path === '/resource_providers') {
      // Each pass lists the providers once when it is done: a move between passes is a write meanwhile.
      if (++lists <= moves) generation++
      return {
        body: {
          resource_providers: [
            {uuid: NUMA, generation: 1},
            {uuid: CN1, generation},
          ],
        },
      }
    }
    return undefined
  })
  const consumers: ConsumerRecord[] = [
    {uuid: C2, project_id: 'p', user_id: 'u', consumer_generation: 1, allocations: {}},
    {uuid: C1, project_id: 'p', user_id: 'u', consumer_generation: 2, allocations: {[CN1]: {resources: {VCPU: 2}}}},
  ]
  const backend = fakeBackend({
    client,
    async ownRecords() {
      return {layout: {generation: 3, racks: [{name: 'r1', hosts: ['cn1']}]}, groups: [], moved: [], aggregateNames: []}
    },
    async wholeCloud() {
      reads++
      return {
        providers: [provider(NUMA, 'cn1-numa0', CN1), {...provider(CN1, 'cn1', null, ['COMPUTE_STATUS_DISABLED']), generation}],
        consumers,
      }
    },
    async disabledReasons(hosts) {
      return new Map(hosts.map((h) => [h, 'PSU failure']))
    },
  })
  return {backend, reads: () => reads}
}

describe('exportSnapshot', () => {
  it("writes placemat's records with Placement's: parents first, custom classes and traits, a host's disabled reason, no consumer holding nothing", async () => {
    const snap = await exportSnapshot(cloud().backend)
    expect(snap.placemat_snapshot).toBe(2)
    expect([snap.resource_classes, snap.traits]).toEqual([['CUSTOM_FPGA'], ['CUSTOM_GOLD']])
    expect(snap.providers.map((p) => [p.name, p.disabled_reason])).toEqual([
      ['cn1', 'PSU failure'],
      ['cn1-numa0', undefined],
    ])
    expect(snap.consumers.map((c) => c.uuid)).toEqual([C1])
    expect(snap.topology).toEqual({generation: 3, nodes: [{level: 'rack', name: 'r1', parent: null}]})
  })

  it('reads everything again when a generation moved while it read, and gives the quiet pass', async () => {
    const c = cloud(1)
    const snap = await exportSnapshot(c.backend)
    expect(c.reads()).toBe(2)
    expect(snap.providers[0].generation).toBe(2)
  })

  it('refuses (exit 4) when no pass of the tries was quiet, rather than mix states', async () => {
    const c = cloud(9)
    const err = await exportSnapshot(c.backend, {tries: 3}).catch((e) => e)
    expect(exitCodeOf(err)).toBe(4)
    expect(err.message).toMatch(/^the cloud changed while it was read: 1 provider\(s\) changed during the last of 3 passes/)
    expect(c.reads()).toBe(3)
  })

  it("says once that plain Placement keeps nothing of placemat's, and writes a version 1 snapshot", async () => {
    const {client} = fakePlacement(({path}) => {
      if (path === '/resource_classes') return {body: {resource_classes: []}}
      if (path.startsWith('/traits?')) return {body: {traits: []}}
      if (path === '/resource_providers') return {body: {resource_providers: []}}
      return undefined
    })
    const said: string[] = []
    const plain = fakeBackend({kind: 'placement', client, ownRecords: async () => undefined, disabledReasons: async () => new Map()})
    const snap = await exportSnapshot(plain, {keepsNothing: () => said.push('nothing')})
    expect([snap.placemat_snapshot, said]).toEqual([1, ['nothing']])
  })

  it("says what plain Placement cannot hold of placemat's parts, in words", () => {
    const parts = {
      topology: {generation: 1, nodes: [{level: 'room' as const, name: 'm1', parent: null}]},
      aggregate_names: [{name: 'a', uuid: C1}],
    }
    expect(placematOnly(parts, 2)).toBe(
      "1 rooms, 0 rows and 0 racks (their names; the hosts' rack, row and room aggregates are kept), 1 aggregate names (given by apply files; the aggregates are kept) and 2 reasons hosts are disabled (COMPUTE_STATUS_DISABLED is kept)",
    )
    expect(placematOnly({})).toBeUndefined()
  })
})
