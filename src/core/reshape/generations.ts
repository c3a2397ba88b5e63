/**
 * The other plan form: a POST /reshaper body written by hand, sent as it is but for the
 * generations it leaves out (resource_provider_generation, consumer_generation), which are
 * taken from a State. Providers the State does not hold keep their entries as written:
 * the reshaper reports them as Placement does.
 */
import type {ReshaperBody} from '../placement/reshaper.js'
import type {State} from '../state/state.js'
import {rootsOf, type CompiledReshape} from './compiled.js'

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/** The providers a body names: its inventories and every consumer's allocations. */
export function providersOfBody(body: ReshaperBody): string[] {
  const rps = new Set<string>(Object.keys(body.inventories))
  for (const c of Object.values(body.allocations ?? {})) for (const rp of Object.keys(c?.allocations ?? {})) rps.add(rp)
  return [...rps]
}

/**
 * A copy of `raw` with every generation it leaves out filled in from `s`. The generations
 * count as filled (worth a re-plan on a concurrent update) only when the body gave none.
 */
export function fillGenerations(s: State, raw: ReshaperBody): CompiledReshape {
  const body: ReshaperBody = JSON.parse(JSON.stringify(raw))
  let filled = false
  let explicit = false
  for (const [uuid, entry] of Object.entries(body.inventories)) {
    if (isObject(entry) && entry.resource_provider_generation === undefined) {
      const p = s.providers.get(uuid)
      if (p) {
        entry.resource_provider_generation = p.generation
        filled = true
      }
    } else explicit = true
  }
  let consumerTypes = false
  for (const [uuid, entry] of Object.entries(body.allocations ?? {})) {
    if (!isObject(entry)) continue
    if (entry.consumer_generation === undefined) {
      entry.consumer_generation = s.consumers.get(uuid)?.generation ?? null
      filled = true
    } else explicit = true
    if (entry.consumer_type !== undefined) consumerTypes = true
  }
  return {body, creates: [], consumerTypes, generationsFilled: filled && !explicit, roots: rootsOf(s, providersOfBody(body))}
}
