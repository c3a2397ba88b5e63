/**
 * A backend and a Placement client for a service's unit test (no process, no HTTP): each answers
 * only what the test gives it, and anything else a service asks of them fails with `not faked:
 * VERB` (or `not faked: GET /path`), so a test says what a service may ask and fails when it asks
 * more. Every verb of the command line's Backend is here: one added there must be added here.
 */
import type {Backend} from '../../src/cli/backend/backend.js'
import {PlacementClient} from '../../src/client/client.js'

/** The verbs a backend may lack: a service asks whether they are there, so they are absent unless given. */
type OptionalVerb = 'namedAggregates' | 'heldState' | 'wholeCloud' | 'rehearse' | 'groupBreaches' | 'applyWithLayout'

/** The verbs every backend has. */
type Verb = Exclude<keyof Backend, OptionalVerb | 'kind' | 'client' | 'oneTransaction'>

const notFaked = (verb: string) => async (): Promise<never> => {
  throw new Error(`not faked: ${verb}`)
}

/** Every verb a backend has, each failing until a test gives its own. */
const unfaked = (): {[K in Verb]: Backend[K]} => ({
  hosts: notFaked('hosts'),
  host: notFaked('host'),
  hostDescription: notFaked('hostDescription'),
  setHostStatus: notFaked('setHostStatus'),
  consumers: notFaked('consumers'),
  consumer: notFaked('consumer'),
  groups: notFaked('groups'),
  ownRecords: notFaked('ownRecords'),
  disabledReasons: notFaked('disabledReasons'),
  catalogHeadroom: notFaked('catalogHeadroom'),
  catalogLosses: notFaked('catalogLosses'),
  catalogMix: notFaked('catalogMix'),
  candidates: notFaked('candidates'),
  why: notFaked('why'),
  providers: notFaked('providers'),
  stateWithGroups: notFaked('stateWithGroups'),
  claimant: notFaked('claimant'),
  knownConsumer: notFaked('knownConsumer'),
  claim: notFaked('claim'),
  claims: notFaked('claims'),
  move: notFaked('move'),
  writeAllocations: notFaked('writeAllocations'),
  loadCloud: notFaked('loadCloud'),
  topologyNodes: notFaked('topologyNodes'),
  currentLayout: notFaked('currentLayout'),
  topologyView: notFaked('topologyView'),
  applyLayout: notFaked('applyLayout'),
  editLayout: notFaked('editLayout'),
  reshape: notFaked('reshape'),
  applyOperations: notFaked('applyOperations'),
})

/** One call a fake Placement answered (or refused): its method, path with its query, and body. */
export interface PlacementCall {
  method: string
  path: string
  body: unknown
}

/** What a fake Placement answers a call with: a status (200 unless said) and a body; undefined: not faked. */
export type PlacementAnswer = (call: PlacementCall) => {status?: number; body?: unknown} | undefined

/** A Placement client answering from `answer`, noting every call it was made (`calls`). */
export function fakePlacement(answer: PlacementAnswer = () => undefined): {client: PlacementClient; calls: PlacementCall[]} {
  const calls: PlacementCall[] = []
  const client = new PlacementClient({
    description: 'a fake Placement',
    async send(method, path, _headers, body) {
      const call = {method, path, body: body === undefined ? undefined : JSON.parse(body)}
      calls.push(call)
      const found = answer(call)
      if (!found) throw new Error(`not faked: ${method} ${path}`)
      return {status: found.status ?? 200, body: found.body, headers: {}}
    },
    close: async () => undefined,
  })
  return {client, calls}
}

/**
 * A backend with `given`'s verbs (and kind, client, oneTransaction: a placemat one, in one
 * transaction, on a Placement that answers nothing, unless said); every other verb fails with
 * `not faked: VERB`.
 */
export function fakeBackend(given: Partial<Backend> = {}): Backend {
  return {kind: 'placemat', oneTransaction: true, client: fakePlacement().client, ...unfaked(), ...given}
}

/** Placement's body for a refusal: its detail and error code. */
export const refusal = (detail: string, code?: string) => ({errors: [{detail, ...(code ? {code} : {})}]})
