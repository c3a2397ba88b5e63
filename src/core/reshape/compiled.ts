/**
 * A reshape ready to run: the POST /reshaper body, the child providers to create before it,
 * and what the check and the writer need to know about how it was made. Both plan forms
 * (the move form, compiled by compileReshapeMoves; a body, completed by fillGenerations)
 * come out as one of these.
 */
import type {ReshaperBody} from '../placement/reshaper.js'
import type {State} from '../state/state.js'

/** A provider the reshape creates first (POST /resource_providers, or a batch create_provider). */
export interface ProviderCreate {
  uuid: string
  name: string
  parent_provider_uuid: string
}

export interface CompiledReshape {
  body: ReshaperBody
  creates: ProviderCreate[]
  /** Whether consumer types are part of the body (microversion 1.38 rather than 1.37). */
  consumerTypes: boolean
  /** Every generation in the body was taken from the State (so a concurrent update is worth a re-plan). */
  generationsFilled: boolean
  /** Roots of the trees the plan names, in the order first named (the trees shown before and after). */
  roots: string[]
}

/**
 * A plan that cannot be made into a reshape of this State (a provider it names is missing,
 * amounts that do not add up, an ambiguous move): nothing was tried.
 */
export class ReshapePlanError extends Error {
  constructor(
    message: string,
    /** The plan names a provider the cloud does not hold (the command line's exit 3). */
    readonly missingProvider = false,
  ) {
    super(message)
    this.name = 'ReshapePlanError'
  }
}

/** The distinct roots of the providers the State holds among `uuids`, in order. */
export function rootsOf(s: State, uuids: Iterable<string>): string[] {
  const roots = new Set<string>()
  for (const uuid of uuids) {
    const p = s.providers.get(uuid)
    if (p) roots.add(p.root)
  }
  return [...roots]
}
