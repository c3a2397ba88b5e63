import type {Version} from '../http/microversion.js'
import type {Provider, State} from './state.js'

/** GET /resource_providers: the providers matching the query's filters, in creation order. */
export function listProviders(s: State, params: Map<string, string[]>, _mv: Version): Provider[] {
  const last = (k: string) => params.get(k)?.at(-1)
  const uuid = last('uuid')
  const name = last('name')
  const inTree = last('in_tree')
  let out = [...s.providers.values()]
  if (uuid !== undefined) out = out.filter((p) => p.uuid === uuid)
  if (name !== undefined) out = out.filter((p) => p.name === name)
  if (inTree !== undefined) {
    const root = s.providers.get(inTree)?.root
    out = out.filter((p) => p.root === root)
  }
  return out
}
