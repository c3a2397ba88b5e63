import type {Version} from '../version.js'
import {filterProviders} from '../candidates/engine.js'
import {parseProviderFilters} from '../candidates/request.js'
import type {Provider, State} from '../state/state.js'

/** GET /resource_providers: the providers matching the query's filters (the candidates engine's filter). */
export function listProviders(s: State, params: Map<string, string[]>, mv: Version): Provider[] {
  return filterProviders(s, parseProviderFilters(params, [mv.major, mv.minor]))
}
