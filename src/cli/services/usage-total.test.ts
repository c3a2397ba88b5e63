/**
 * usage total against a fake backend and a fake Placement (no process, no HTTP): GET /usages
 * asked with the query given, its lines made only when asked for, and from 1.38 (usages by
 * consumer type) each line counting the project's consumers that hold its class.
 */
import {describe, expect, it} from 'vitest'
import type {ConsumerListing} from '../../core/consumer-list.js'
import {fakeBackend, fakePlacement} from '../../../test/helpers/fake-backend.js'
import type {Endpoint} from '../backend/backend.js'
import {usageTotal} from './usage-total.js'

const CN1 = '00000000-0000-4000-8000-000000000001'

const holder = (uuid: string, type: string | null, classes: string[]): ConsumerListing => ({
  uuid,
  project_id: 'p',
  user_id: 'u',
  consumer_type: type,
  allocations: {[CN1]: {resources: Object.fromEntries(classes.map((rc) => [rc, 1]))}},
  hosts: ['cn1'],
  groups: [],
})

/** Placement answering `usages`; a backend listing two instances and a migration of project p. */
function endpoint(usages: Record<string, unknown>): {endpoint: Endpoint; asked: unknown[]} {
  const {client} = fakePlacement(({path}) => (path.startsWith('/usages') ? {body: {usages}} : undefined))
  const asked: unknown[] = []
  const backend = fakeBackend({
    client,
    consumers: async (filter) => {
      asked.push(filter)
      return {
        consumers: [
          holder('c1', 'INSTANCE', ['VCPU']),
          holder('c2', 'INSTANCE', ['VCPU', 'MEMORY_MB']),
          holder('c3', 'MIGRATION', ['VCPU']),
        ],
        groupsKept: true,
      }
    },
  })
  return {endpoint: {client, backend: async () => backend}, asked}
}

describe('usage total', () => {
  it('asks GET /usages with the project, user and type given, and makes no lines unless asked', async () => {
    const e = endpoint({VCPU: 3})
    const out = await usageTotal(e.endpoint, {project: 'p', user: 'u'}, {rows: false})
    expect([out.body, out.rows, out.grouped]).toEqual([{usages: {VCPU: 3}}, [], false])
    expect(e.asked).toEqual([])
  })

  it("counts per type the project's consumers holding each class, from 1.38", async () => {
    const e = endpoint({INSTANCE: {VCPU: 2, MEMORY_MB: 512, consumer_count: 2}, MIGRATION: {VCPU: 1, consumer_count: 1}})
    const out = await usageTotal(e.endpoint, {project: 'p'}, {rows: true})
    expect(out.grouped).toBe(true)
    expect(out.rows).toEqual([
      {consumer_type: 'INSTANCE', resource_class: 'VCPU', usage: 2, consumer_count: 2},
      {consumer_type: 'INSTANCE', resource_class: 'MEMORY_MB', usage: 512, consumer_count: 1},
      {consumer_type: 'MIGRATION', resource_class: 'VCPU', usage: 1, consumer_count: 1},
    ])
    expect(e.asked).toEqual([{project: 'p'}])
  })
})
