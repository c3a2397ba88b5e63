/**
 * spread() against a fake backend and a fake Placement (no process, no HTTP): candidates in
 * distinct racks written in one call, each kept apart from the others; refused when the
 * candidates are in too few racks; read and chosen again after a 409.
 */
import {describe, expect, it} from 'vitest'
import {ApiError, PlacementClient} from '../../client/client.js'
import type {CandidatesAsk, ClaimWrite, Endpoint} from '../backend/backend.js'
import type {CandidatesBody} from '../candidates/search.js'
import {exitCodeOf} from '../failure.js'
import {spread} from './spread.js'
import {fakeBackend} from '../../../test/helpers/fake-backend.js'

const P = (n: number) => `00000000-0000-4000-8000-00000000000${n}`
const A = 'aaaaaaaa-0000-4000-8000-000000000001'
const B = 'aaaaaaaa-0000-4000-8000-000000000002'
const own = {project: 'p', user: 'u'}
const consumers = [
  {uuid: A, label: 'a'},
  {uuid: B, label: 'b'},
]

/** Placement listing cn1..cn4 (none sharing). */
const placement = new PlacementClient({
  description: 'fake',
  async send(_method, path) {
    if (path === '/resource_providers')
      return {
        status: 200,
        body: {resource_providers: [1, 2, 3, 4].map((n) => ({uuid: P(n), name: `cn${n}`, root_provider_uuid: P(n), generation: 1}))},
        headers: {},
      }
    if (path.startsWith('/resource_providers?required=')) return {status: 200, body: {resource_providers: []}, headers: {}}
    return {status: 404, body: {errors: [{detail: `nothing at ${path}`}]}, headers: {}}
  },
  close: async () => undefined,
})

/** Racks r1 (cn1, cn2) and r2 (cn3, cn4); each read of the candidates the next of `reads`; `write` runs on each claims call. */
function fake(reads: number[][], write?: (writes: ClaimWrite[], n: number) => void) {
  const calls: ClaimWrite[][] = []
  let n = 0
  const backend = fakeBackend({
    kind: 'placemat',
    client: placement,
    async currentLayout() {
      return {
        racks: [
          {name: 'r1', hosts: ['cn1', 'cn2']},
          {name: 'r2', hosts: ['cn3', 'cn4']},
        ],
      }
    },
    async candidates(ask: CandidatesAsk) {
      const hosts = reads[Math.min(n++, reads.length - 1)]
      const body: CandidatesBody = {
        allocation_requests: hosts.map((h) => ({allocations: {[P(h)]: {resources: {VCPU: 1}}}})),
        provider_summaries: {},
      }
      return {body, query: ask.query, path: '/fake'}
    },
    async claimant() {
      return {allocations: {}}
    },
    async claims(writes: ClaimWrite[]) {
      calls.push(writes)
      write?.(writes, calls.length)
      return {via: 'POST /placemat/v1/claims'}
    },
  })
  const endpoint: Endpoint = {client: placement, backend: async () => backend}
  return {endpoint, calls}
}

const flags = {resources: 'VCPU:1', group: ['web']}

describe('spread', () => {
  it('takes the first candidates in distinct racks and writes them in one call, each apart from the others', async () => {
    const f = fake([[1, 2, 3]])
    const out = await spread(f.endpoint, flags, consumers, 'rack', own, false)
    expect(out.claims.map((c) => [c.label, c.candidate, c.node])).toEqual([
      ['a', 1, 'r1'],
      ['b', 3, 'r2'],
    ])
    expect(f.calls).toHaveLength(1)
    expect(f.calls[0].map((w) => [w.consumer, w.group, w.rules])).toEqual([
      [A, 'web', [{relation: 'different', level: 'rack', consumer: B}]],
      [B, 'web', [{relation: 'different', level: 'rack', consumer: A}]],
    ])
    expect([out.via, out.attempts]).toEqual(['POST /placemat/v1/claims', 1])
  })

  it('refuses, claiming nothing, when the candidates are in too few racks', async () => {
    const f = fake([[1, 2]])
    const err = await spread(f.endpoint, flags, consumers, 'rack', own, false).catch((e) => e)
    expect([exitCodeOf(err), err.message]).toEqual([
      4,
      'cannot spread 2 consumers over distinct racks: candidates are in 1 rack(s); nothing claimed',
    ])
    expect(f.calls).toEqual([])
  })

  it('after a 409 reads the candidates again and chooses again', async () => {
    const f = fake(
      [
        [1, 3],
        [2, 4],
      ],
      (_w, n) => {
        if (n === 1) throw new ApiError(409, 'capacity taken', undefined, 'POST', '/claims')
      },
    )
    const out = await spread(f.endpoint, flags, consumers, 'rack', own, false)
    expect(out.claims.map((c) => Object.keys(c.allocations)[0])).toEqual([P(2), P(4)])
    expect(out.attempts).toBe(2)
  })
})
