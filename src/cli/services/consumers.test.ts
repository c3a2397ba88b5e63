/**
 * The consumer services against a fake backend, and the plain-Placement backend's listing
 * against a fake Placement (no process, no HTTP): a consumer named in any uuid form is asked
 * for canonically, a bad one refused before anything is asked; plain Placement's consumers are
 * read from the providers' allocations, without groups, and --group is refused there.
 */
import {describe, expect, it} from 'vitest'
import {PlacementClient} from '../../client/client.js'
import {PlainBackend} from '../backend/plain.js'
import {exitCodeOf} from '../failure.js'
import {listConsumers, showConsumer} from './consumers.js'
import {fakeBackend} from '../../../test/helpers/fake-backend.js'

const CN1 = '00000000-0000-4000-8000-000000000001'
const CN2 = '00000000-0000-4000-8000-000000000002'
const C1 = 'cccccccc-0000-4000-8000-000000000001'
const C2 = 'cccccccc-0000-4000-8000-000000000002'

/** Plain Placement: cn1 holding C1 and C2, cn2 holding C2. */
const routes: Record<string, unknown> = {
  '/resource_providers': {
    resource_providers: [
      {uuid: CN1, name: 'cn1', root_provider_uuid: CN1, generation: 1},
      {uuid: CN2, name: 'cn2', root_provider_uuid: CN2, generation: 1},
    ],
  },
  '/resource_providers?required=MISC_SHARES_VIA_AGGREGATE': {resource_providers: []},
  [`/resource_providers/${CN1}/allocations`]: {allocations: {[C1]: {}, [C2]: {}}},
  [`/resource_providers/${CN2}/allocations`]: {allocations: {[C2]: {}}},
  [`/allocations/${C1}`]: {allocations: {[CN1]: {resources: {VCPU: 1}}}, project_id: 'p1', user_id: 'u', consumer_generation: 1},
  [`/allocations/${C2}`]: {
    allocations: {[CN1]: {resources: {VCPU: 1}}, [CN2]: {resources: {VCPU: 2}}},
    project_id: 'p2',
    user_id: 'u',
    consumer_generation: 3,
    consumer_type: 'INSTANCE',
  },
}
const placement = new PlacementClient({
  description: 'fake',
  async send(_method, path) {
    const body = routes[path]
    return body === undefined
      ? {status: 404, body: {errors: [{detail: `nothing at ${path}`}]}, headers: {}}
      : {status: 200, body, headers: {}}
  },
  close: async () => undefined,
})

describe('consumers', () => {
  it('asks the backend for a consumer in its canonical form, and refuses what is no uuid before asking', async () => {
    const asked: string[] = []
    const backend = fakeBackend({
      async consumer(uuid: string) {
        asked.push(uuid)
        return {
          uuid,
          project_id: 'p',
          user_id: 'u',
          consumer_type: null,
          consumer_generation: 1,
          allocations: {},
          providers: [],
          hosts: [],
          groups: [],
        }
      },
    })
    await showConsumer(backend, C1.toUpperCase())
    const err = await showConsumer(backend, 'web-1').catch((e) => e)
    expect(exitCodeOf(err)).toBe(2)
    expect(asked).toEqual([C1])
  })

  it("lists plain Placement's consumers from the providers' allocations, their groups unknown", async () => {
    const list = await listConsumers(new PlainBackend(placement), {})
    expect(list.groupsKept).toBe(false)
    expect(list.consumers.map((c) => [c.uuid, c.project_id, c.consumer_type ?? null, c.hosts, c.groups])).toEqual([
      [C1, 'p1', null, ['cn1'], null],
      [C2, 'p2', 'INSTANCE', ['cn1', 'cn2'], null],
    ])
    const onCn2 = await listConsumers(new PlainBackend(placement), {inTree: CN2})
    expect(onCn2.consumers.map((c) => c.uuid)).toEqual([C2])
  })

  it('refuses the members of a placement group on plain Placement (exit 2), which keeps none', async () => {
    const err = await listConsumers(new PlainBackend(placement), {group: 'web'}).catch((e) => e)
    expect([exitCodeOf(err), err.message]).toEqual([
      2,
      'placement groups are kept by placemat (a daemon or --db): plain OpenStack Placement has none to list consumers by',
    ])
  })

  it('says plain Placement knows nothing of a consumer that holds nothing (exit 3)', async () => {
    routes[`/allocations/${CN2}`] = {allocations: {}}
    const err = await showConsumer(new PlainBackend(placement), CN2).catch((e) => e)
    expect([exitCodeOf(err), err.message]).toEqual([3, `No consumer ${CN2} found: it holds no allocations and has no record`])
  })
})
