/**
 * placemat top's frames against a fake backend (no process, no HTTP): capacity and usage summed
 * per class, the fullest providers first, hosts out of service named; the first frame's claims
 * the latest the endpoint dates, later frames' those that came, changed or went since; with a
 * flavor, each rack's fit, the fullest first.
 */
import {describe, expect, it} from 'vitest'
import {flavorRequest} from '../../core/headroom/flavors.js'
import {stateFromSnapshot} from '../../core/snapshot.js'
import {nodeUuid} from '../../core/topology.js'
import type {ConsumerRecord, ProviderRecord} from '../../core/wire.js'
import {fakeBackend, fakePlacement} from '../../../test/helpers/fake-backend.js'
import {inv} from '../../../test/helpers/records.js'
import {rackFits, TopModel} from './top.js'

const CN1 = '00000000-0000-4000-8000-000000000001'
const CN2 = '00000000-0000-4000-8000-000000000002'
const C = (n: number) => `cccccccc-0000-4000-8000-00000000000${n}`

const provider = (uuid: string, name: string, vcpu: number, used: number): ProviderRecord => ({
  uuid,
  name,
  generation: 1,
  parent_provider_uuid: null,
  root_provider_uuid: uuid,
  inventories: {VCPU: inv(vcpu)},
  usages: {VCPU: used},
  traits: [],
  aggregates: [],
})

const consumer = (uuid: string, vcpu: number, updated: string): ConsumerRecord => ({
  uuid,
  updated_at: updated,
  allocations: {[CN1]: {resources: {VCPU: vcpu}}},
})

/** A cloud of cn1 (8 VCPU, cn2 out of service with 4) read frame after frame from `frames` (its consumers). */
function backendOf(frames: ConsumerRecord[][]) {
  let n = 0
  const {client} = fakePlacement(({path}) =>
    path.startsWith('/resource_providers?required=COMPUTE_STATUS_DISABLED') ? {body: {resource_providers: [{uuid: CN2}]}} : undefined,
  )
  return fakeBackend({
    client,
    async loadCloud() {
      const consumers = frames[Math.min(n++, frames.length - 1)]
      return {
        providers: new Map([
          [CN1, provider(CN1, 'cn1', 8, 2)],
          [CN2, provider(CN2, 'cn2', 4, 3)],
        ]),
        consumers: new Map(consumers.map((c) => [c.uuid, c])),
      }
    },
  })
}

describe('top', () => {
  it('sums each class over the providers, puts the fullest first and names the hosts out of service', async () => {
    const frame = await new TopModel(backendOf([[]])).frame()
    expect(frame.classes).toEqual([{resource_class: 'VCPU', used: 5, capacity: 12, providers: 2}])
    expect(frame.fullest.map((r) => [r.name, r.ratio, r.disabled])).toEqual([
      ['cn2', 0.75, true],
      ['cn1', 0.25, false],
    ])
    expect(frame.disabled_hosts).toEqual(['cn2'])
  })

  it('starts with the consumers the endpoint says were updated last, then shows what came, changed and went', async () => {
    const first = [
      consumer(C(1), 1, '2025-01-01T10:00:00Z'),
      consumer(C(2), 1, '2025-01-01T12:00:00Z'),
      consumer(C(3), 1, '2025-01-01T11:00:00Z'),
    ]
    const second = [
      consumer(C(1), 1, '2025-01-01T10:00:00Z'),
      consumer(C(2), 2, '2025-01-02T00:00:00Z'),
      consumer(C(4), 1, '2025-01-02T00:00:00Z'),
    ]
    const top = new TopModel(backendOf([first, second]), {limit: 3})
    expect((await top.frame()).claims.map((c) => [c.consumer, c.change])).toEqual([
      [C(2), 'recent'],
      [C(3), 'recent'],
      [C(1), 'recent'],
    ])
    const next = await top.frame()
    expect(next.claims.map((c) => [c.consumer, c.change])).toEqual([
      [C(2), 'changed'],
      [C(4), 'new'],
      [C(3), 'removed'],
    ])
    expect(next.consumers).toBe(3)
  })

  it("gives each rack's fit for a flavor, with its row and room, the fullest first", () => {
    const s = stateFromSnapshot({
      classes: ['VCPU', 'MEMORY_MB'],
      providers: [
        {uuid: CN1, name: 'cn1', generation: 1, inventories: {VCPU: inv(8), MEMORY_MB: inv(8192)}, aggregates: [nodeUuid('rack', 'r1')]},
        {uuid: CN2, name: 'cn2', generation: 1, inventories: {VCPU: inv(2), MEMORY_MB: inv(8192)}, aggregates: [nodeUuid('rack', 'r2')]},
      ],
      topology: [
        {uuid: nodeUuid('room', 'm1'), name: 'm1', level: 'room', parent: null},
        {uuid: nodeUuid('row', 'w1'), name: 'w1', level: 'row', parent: nodeUuid('room', 'm1')},
        {uuid: nodeUuid('rack', 'r1'), name: 'r1', level: 'rack', parent: nodeUuid('row', 'w1')},
        {uuid: nodeUuid('rack', 'r2'), name: 'r2', level: 'rack', parent: null},
      ],
    })
    const flavor = flavorRequest({name: 'small', vcpus: 2, ram: 1024, disk: 0, ephemeral: 0, swap: 0, properties: {}})
    expect(rackFits(s, flavor).map((r) => [r.room, r.row, r.rack, r.fit])).toEqual([
      [null, null, 'r2', 1],
      ['m1', 'w1', 'r1', 4],
    ])
  })
})
