/**
 * searchCandidates against a fake backend and a fake Placement (no process, no HTTP): what it
 * asks the backend for, what it leaves to it, and what it checks and cuts itself.
 */
import {describe, expect, it} from 'vitest'
import {ApiError, PlacementClient} from '../../client/client.js'
import {nodeUuid} from '../../core/topology.js'
import type {Backend, CandidatesAnswer, CandidatesAsk, Endpoint} from '../backend/backend.js'
import {searchCandidates, type CandidatesBody} from './search.js'
import {fakeBackend} from '../../../test/helpers/fake-backend.js'

const P = (n: number) => `00000000-0000-4000-8000-00000000000${n}`
const C1 = 'cccccccc-0000-4000-8000-000000000001'
const R1 = nodeUuid('rack', 'r1')
const R2 = nodeUuid('rack', 'r2')

/** A Placement that answers GETs from `routes` (path without query -> body); every request is noted in `seen`. */
function placement(routes: Record<string, unknown>, seen: string[] = []): PlacementClient {
  return new PlacementClient({
    description: 'fake',
    async send(method, path) {
      seen.push(`${method} ${path}`)
      const body = routes[path] ?? routes[path.split('?')[0]]
      if (body === undefined) return {status: 404, body: {errors: [{detail: `nothing at ${path}`}]}, headers: {}}
      return {status: 200, body, headers: {}}
    },
    close: async () => undefined,
  })
}

const candidate = (...providers: number[]) => ({allocations: Object.fromEntries(providers.map((p) => [P(p), {resources: {VCPU: 1}}]))})
const body = (...candidates: number[][]): CandidatesBody => ({
  allocation_requests: candidates.map((c) => candidate(...c)),
  provider_summaries: {},
})

/** A backend whose candidates are `answer`, noting each ask; the layout r1: cn1, r2: cn2 and cn3. */
function candidatesBackend(client: PlacementClient, answer: CandidatesBody, asked: CandidatesAsk[]): Backend {
  return fakeBackend({
    kind: 'placemat',
    client,
    async candidates(ask: CandidatesAsk): Promise<CandidatesAnswer> {
      asked.push(structuredClone({...ask, order: undefined}))
      return {body: structuredClone(answer), query: ask.query, path: '/fake'}
    },
    async currentLayout() {
      return {
        racks: [
          {name: 'r1', hosts: ['cn1']},
          {name: 'r2', hosts: ['cn2', 'cn3']},
        ],
      }
    },
  })
}

const endpointOf = (client: PlacementClient, backend?: Backend): Endpoint => ({
  client,
  backend: async () => {
    if (!backend) throw new Error('no backend should be chosen')
    return backend
  },
})

/** Three hosts and C1 on cn1 (rack r1). */
const cloudRoutes = {
  '/resource_providers': {
    resource_providers: [1, 2, 3].map((n) => ({uuid: P(n), name: `cn${n}`, root_provider_uuid: P(n), generation: 1})),
  },
  '/resource_providers?required=MISC_SHARES_VIA_AGGREGATE': {resource_providers: []},
  [`/allocations/${C1}`]: {allocations: {[P(1)]: {resources: {VCPU: 1}}}},
  [`/resource_providers/${P(1)}/aggregates`]: {aggregates: [R1]},
}

describe('searchCandidates', () => {
  it("sends a search of Placement's own parameters to Placement's route, choosing no backend", async () => {
    const seen: string[] = []
    const client = placement({'/allocation_candidates': body([1], [2])}, seen)
    const search = await searchCandidates(endpointOf(client), {resources: 'VCPU:1', limit: 5})
    expect(seen).toEqual(['GET /allocation_candidates?resources=VCPU%3A1&root_required=%21COMPUTE_STATUS_DISABLED&limit=5'])
    expect(search.body.allocation_requests).toHaveLength(2)
  })

  it('leaves the placement group, the consumer and the cut to the backend', async () => {
    const asked: CandidatesAsk[] = []
    const client = placement({})
    const backend = candidatesBackend(client, body([1], [2], [3]), asked)
    const search = await searchCandidates(endpointOf(client, backend), {resources: 'VCPU:1', group: ['web'], limit: 2}, {consumer: C1})
    expect(asked).toEqual([
      {
        query: {resources: ['VCPU:1'], root_required: ['!COMPUTE_STATUS_DISABLED'], limit: ['2']},
        group: 'web',
        consumer: C1,
        files: {},
      },
    ])
    // The backend cuts: what it answers stands.
    expect(search.body.allocation_requests).toHaveLength(3)
  })

  it('checks a rule only granular groups carry on every candidate, and cuts after it', async () => {
    const seen: string[] = []
    const client = placement({...cloudRoutes, '/allocation_candidates': body([1], [2], [3])}, seen)
    const backend = candidatesBackend(client, body(), [])
    const search = await searchCandidates(endpointOf(client, backend), {
      group: ['_A:resources=VCPU:1'],
      different: [`rack:${C1}`],
      limit: 1,
    })
    // No unsuffixed group: Placement applies member_of to the provider, not its host, so the
    // filter is not exact and the limit is not sent.
    const asked = seen.find((r) => r.startsWith('GET /allocation_candidates'))
    expect(decodeURIComponent(asked!)).toBe(
      `GET /allocation_candidates?resources_A=VCPU:1&root_required=!COMPUTE_STATUS_DISABLED&member_of_A=!in:${R1}`,
    )
    expect(search.body.allocation_requests).toEqual([candidate(2)])
  })

  it("asks for the order with where the candidates and the consumer are, from the layout's racks", async () => {
    let order: CandidatesAsk['order']
    const client = placement(cloudRoutes)
    const backend = fakeBackend({
      ...candidatesBackend(client, body(), []),
      async candidates(ask: CandidatesAsk) {
        order = ask.order
        return {body: body([3], [1]), query: ask.query, path: '/fake'}
      },
    })
    await searchCandidates(endpointOf(client, backend), {resources: 'VCPU:1', near: C1})
    expect(order).toMatchObject({direction: 'near', consumer: C1})
    const anchor = await order!.place.anchor()
    expect([...anchor.rack]).toEqual([R1])
    const where = order!.place.of(body([3]))
    expect([...where(candidate(3)).rack]).toEqual([R2])
  })

  it('refuses --near a consumer that holds nothing before asking for candidates', async () => {
    const client = placement({[`/allocations/${C1}`]: {allocations: {}}})
    const err = await searchCandidates(endpointOf(client), {resources: 'VCPU:1', near: C1}).catch((e) => e)
    expect(err.message).toMatch(/holds no allocations/)
    expect(err).not.toBeInstanceOf(ApiError)
  })
})
