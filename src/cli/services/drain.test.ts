/**
 * drain() against a fake backend (no process, no HTTP): a dry run lists what it would move
 * and changes nothing; a drain takes the host out of service, then moves each consumer in one
 * write with its generation; a plan that cannot move everyone changes nothing; a move refused
 * with 409 is planned again on the cloud as it is then.
 */
import {describe, expect, it} from 'vitest'
import {ApiError, PlacementClient} from '../../client/client.js'
import {stateFromSnapshot} from '../../core/snapshot.js'
import {drain} from './drain.js'
import {fakeBackend} from '../../../test/helpers/fake-backend.js'

const CN1 = '00000000-0000-4000-8000-000000000001'
const CN2 = '00000000-0000-4000-8000-000000000002'
const C1 = 'cccccccc-0000-4000-8000-000000000001'
const C2 = 'cccccccc-0000-4000-8000-000000000002'

/** Placement finding cn1 by name. */
const placement = new PlacementClient({
  description: 'fake',
  async send(_method, path) {
    if (path === '/resource_providers?name=cn1')
      return {status: 200, body: {resource_providers: [{uuid: CN1, name: 'cn1', root_provider_uuid: CN1, generation: 1}]}, headers: {}}
    return {status: 404, body: {errors: [{detail: `nothing at ${path}`}]}, headers: {}}
  },
  close: async () => undefined,
})

const inventory = (total: number) => ({VCPU: {total, reserved: 0, min_unit: 1, max_unit: total, step_size: 1, allocation_ratio: 1}})

/** cn1 holding C1 (2 VCPU) and C2 (4 VCPU); cn2 with `room` VCPU. */
const cloud = (room: number) =>
  stateFromSnapshot({
    classes: ['VCPU'],
    providers: [
      {uuid: CN1, name: 'cn1', generation: 1, inventories: inventory(8)},
      {uuid: CN2, name: 'cn2', generation: 1, inventories: inventory(room)},
    ],
    consumers: [
      {uuid: C1, project_id: 'p', user_id: 'u', consumer_generation: 1, allocations: {[CN1]: {resources: {VCPU: 2}}}},
      {uuid: C2, project_id: 'p', user_id: 'u', consumer_generation: 5, allocations: {[CN1]: {resources: {VCPU: 4}}}},
    ],
  })

/** A backend on that cloud, noting what it is asked to do; `write` may refuse a move. */
function fake(room: number, write?: (body: Record<string, {consumer_generation: number}>, n: number) => void) {
  const did: string[] = []
  let writes = 0
  const backend = fakeBackend({
    kind: 'placemat',
    client: placement,
    async stateWithGroups() {
      did.push('read')
      return cloud(room)
    },
    async setHostStatus(uuid: string, disabled: boolean, reason?: string) {
      did.push(`${disabled ? 'disable' : 'enable'} ${uuid === CN1 ? 'cn1' : uuid}${reason ? `: ${reason}` : ''}`)
      const host = {uuid, name: 'cn1', generation: 2, disabled, disabled_reason: reason ?? null, rack: null, row: null, room: null}
      return {host: {...host, consumers: [], capacity: {}, used: {}}, changed: true, reasonDropped: false}
    },
    async writeAllocations(body: Record<string, {consumer_generation: number}>) {
      const [consumer, entry] = Object.entries(body)[0]
      did.push(`move ${consumer === C1 ? 'C1' : 'C2'} at ${entry.consumer_generation}`)
      write?.(body, ++writes)
    },
  })
  return {backend, did}
}

describe('drain', () => {
  it('a dry run lists where each consumer would go, and changes nothing', async () => {
    const f = fake(8)
    const r = await drain(f.backend, 'cn1', {dryRun: true})
    expect(r.consumers.map((e) => [e.consumer_uuid, e.status, e.to_host?.name])).toEqual([
      [C1, 'would move', 'cn2'],
      [C2, 'would move', 'cn2'],
    ])
    expect([r.host_status, r.complete, r.changed]).toEqual(['would disable', true, false])
    expect(f.did).toEqual(['read'])
  })

  it('takes the host out of service, plans again, then moves each consumer in one write with its generation', async () => {
    const f = fake(8)
    const r = await drain(f.backend, 'cn1', {reason: 'PSU'})
    expect(f.did).toEqual(['read', 'disable cn1: PSU', 'read', 'move C1 at 1', 'move C2 at 5'])
    expect([r.host_status, r.reason, r.complete, r.changed]).toEqual(['disabled', 'PSU', true, true])
    expect(r.consumers.map((e) => e.status)).toEqual(['moved', 'moved'])
  })

  it('changes nothing when not every consumer can move, unless partial', async () => {
    const f = fake(4)
    const r = await drain(f.backend, 'cn1')
    expect(r.consumers.map((e) => [e.consumer_uuid, e.status])).toEqual([
      [C1, 'would move'],
      [C2, 'cannot move'],
    ])
    expect([r.complete, r.changed, r.host_status]).toEqual([false, false, 'left enabled'])
    expect(f.did).toEqual(['read'])
  })

  it('plans a move refused with 409 again on the cloud as it is then, and tries once more', async () => {
    const f = fake(8, (_body, n) => {
      if (n === 1) throw new ApiError(409, 'consumer generation conflict', undefined, 'POST', '/allocations')
    })
    const r = await drain(f.backend, 'cn1', {keepEnabled: true})
    expect(f.did).toEqual(['read', 'move C1 at 1', 'read', 'move C1 at 1', 'move C2 at 5'])
    expect(r.consumers.map((e) => [e.consumer_uuid, e.status, e.attempts])).toEqual([
      [C1, 'moved', 2],
      [C2, 'moved', 1],
    ])
    expect(r.host_status).toBe('left enabled')
  })
})
