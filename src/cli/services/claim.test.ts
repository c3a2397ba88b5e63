/**
 * claim() against a fake backend (no process, no HTTP): down the candidates on a 409, the same
 * candidate again after a consumer generation conflict, the candidates read again after a rule
 * broken meanwhile, a held consumer refused, no candidate explained, the winner named.
 */
import {describe, expect, it} from 'vitest'
import {ApiError, PlacementClient} from '../../client/client.js'
import {AFFINITY_VIOLATION, ErrorCode} from '../../core/errors.js'
import type {Backend, CandidatesAsk, ClaimWrite, ConsumerAllocations, Endpoint} from '../backend/backend.js'
import type {CandidatesBody} from '../candidates/search.js'
import {exitCodeOf} from '../failure.js'
import {claim} from './claim.js'
import {fakeBackend} from '../../../test/helpers/fake-backend.js'

const C = 'cccccccc-0000-4000-8000-000000000001'
const P = (n: number) => `00000000-0000-4000-8000-00000000000${n}`
const own = {project: 'p', user: 'u'}
const refused = (code?: string, detail = 'refused') => new ApiError(409, detail, code, 'POST', '/claims')

interface Fake {
  backend: Backend
  asked: CandidatesAsk[]
  writes: ClaimWrite[]
}

/**
 * A backend whose candidates are one per provider in `hosts` (each read of them the next of
 * `reads`, the last one again after), whose claimant is each of `consumers` in turn, and whose
 * claim runs `write` (default: accepted).
 */
function fake(opts: {
  reads: number[][]
  consumers?: ConsumerAllocations[]
  write?: (w: ClaimWrite, n: number) => void
  why?: string
}): Fake {
  const asked: CandidatesAsk[] = []
  const writes: ClaimWrite[] = []
  let reads = 0
  let consumers = 0
  const backend = fakeBackend({
    kind: 'placemat',
    client: new PlacementClient({description: 'none', send: () => Promise.reject(new Error('no HTTP')), close: async () => undefined}),
    async candidates(ask: CandidatesAsk) {
      asked.push(ask)
      const hosts = opts.reads[Math.min(reads++, opts.reads.length - 1)]
      const body: CandidatesBody = {
        allocation_requests: hosts.map((h) => ({allocations: {[P(h)]: {resources: {VCPU: 1}}}})),
        provider_summaries: {},
      }
      return {body, query: ask.query, path: '/fake'}
    },
    async claimant() {
      const list = opts.consumers ?? [{allocations: {}}]
      return list[Math.min(consumers++, list.length - 1)]
    },
    async claim(w: ClaimWrite) {
      writes.push(w)
      opts.write?.(w, writes.length)
      return {consumer_generation: (w.generation ?? 0) + 1, via: 'POST /placemat/v1/claims'}
    },
    async why() {
      return opts.why ? {why: opts.why, steps: []} : null
    },
    async providers(uuids: string[]) {
      return uuids.map((uuid, i) => ({uuid, name: `cn${i + 1}`, generation: 1}))
    },
  })
  return {backend, asked, writes}
}

const endpointOf = (backend: Backend): Endpoint => ({client: backend.client, backend: async () => backend})
const flags = {resources: 'VCPU:1'}

describe('claim', () => {
  it('writes the first candidate; on a 409 the next one, as alternates', async () => {
    const f = fake({
      reads: [[1, 2, 3]],
      write: (_w, n) => {
        if (n === 1) throw refused(undefined, 'capacity taken')
      },
    })
    const out = await claim(endpointOf(f.backend), flags, {consumer: C, own})
    expect([out.candidate, out.alternates, out.attempts, out.refreshes]).toEqual([2, 1, 2, 0])
    expect(f.writes.map((w) => Object.keys(w.allocations))).toEqual([[P(1)], [P(2)]])
    expect(f.writes[1]).toMatchObject({consumer: C, project: 'p', user: 'u', generation: null, rules: []})
    // The consumer's own groups keep the candidates: the backend is told whose they are.
    expect(f.asked[0].consumer).toBe(C)
  })

  it('after a consumer generation conflict, reads the consumer again and writes the same candidate with its generation', async () => {
    const f = fake({
      reads: [[1, 2]],
      consumers: [{allocations: {}}, {allocations: {}, consumer_generation: 4, project_id: 'p', user_id: 'u'}],
      write: (_w, n) => {
        if (n === 1) throw refused(ErrorCode.CONCURRENT_UPDATE, 'consumer generation conflict')
      },
    })
    const out = await claim(endpointOf(f.backend), flags, {consumer: C, own})
    expect(f.writes.map((w) => [Object.keys(w.allocations)[0], w.generation])).toEqual([
      [P(1), null],
      [P(1), 4],
    ])
    expect([out.candidate, out.attempts, out.consumer_generation]).toEqual([1, 2, 5])
  })

  it('reads the candidates again when a rule was broken meanwhile, and goes on from the new list', async () => {
    const f = fake({
      reads: [[1, 2], [3]],
      write: (w) => {
        if (Object.keys(w.allocations)[0] !== P(3)) throw refused(AFFINITY_VIOLATION, 'rule broken')
      },
    })
    const out = await claim(endpointOf(f.backend), flags, {consumer: C, own})
    expect([out.candidate, out.attempts, out.refreshes]).toEqual([1, 2, 1])
    expect(f.asked).toHaveLength(2)
  })

  it('refuses a consumer that already holds something, unless told to replace it', async () => {
    const held = {allocations: {[P(9)]: {resources: {VCPU: 1}}}, consumer_generation: 2, project_id: 'p', user_id: 'u'}
    const err = await claim(endpointOf(fake({reads: [[1]], consumers: [held]}).backend), flags, {consumer: C, own}).catch((e) => e)
    expect([exitCodeOf(err), err.message]).toEqual([4, `consumer ${C} already has allocations (release it first, or --replace)`])
    const f = fake({reads: [[1]], consumers: [held]})
    const out = await claim(endpointOf(f.backend), flags, {consumer: C, own: {}, replace: true})
    expect([out.consumer_generation, f.writes[0].generation]).toEqual([3, 2])
  })

  it('with no candidate, says why the backend says there is none', async () => {
    const err = await claim(endpointOf(fake({reads: [[]], why: 'no host has 64 VCPU free'}).backend), flags, {consumer: C, own}).catch(
      (e) => e,
    )
    expect([exitCodeOf(err), err.message]).toEqual([4, 'no allocation candidates for this request: no host has 64 VCPU free'])
  })

  it('names the winner by looking up its providers alone', async () => {
    const out = await claim(endpointOf(fake({reads: [[2, 1]]}).backend), flags, {consumer: C, own, names: true})
    expect([...out.providers!.keys()]).toEqual([P(2)])
  })

  it('a new consumer needs a project and a user', async () => {
    const err = await claim(endpointOf(fake({reads: [[1]]}).backend), flags, {consumer: C, own: {}}).catch((e) => e)
    expect([exitCodeOf(err), err.message]).toEqual([2, `consumer ${C} is new: give --project and --user`])
  })
})
