/**
 * Traits and provider traits (Placement 8.0.0 handlers/trait.py, objects/trait.py).
 *
 * Standard traits (os-traits) are every trait not named CUSTOM_*; they cannot be deleted.
 * A custom trait cannot be deleted while a provider has it. Setting a provider's traits
 * bumps its generation only when the set actually changes.
 */
import {ErrorCode, PlacementError, badRequest, conflict, notFound} from '../errors.js'
import type {NamedRecord, Provider, State} from '../state/state.js'

export const CUSTOM_NAMESPACE = 'CUSTOM_'

export const isCustomTrait = (name: string) => name.startsWith(CUSTOM_NAMESPACE)

export interface TraitFilters {
  /** name=in:a,b */
  nameIn?: string[]
  /** name=startswith:prefix (SQL LIKE 'prefix%' semantics, as Placement queries it) */
  prefix?: string
  /** associated=true|false */
  associated?: boolean
}

const byId = (a: NamedRecord, b: NamedRecord) => a.id - b.id

/** A matcher with SQL LIKE '<prefix>%' semantics: '_' is any one character, '%' any run; case-insensitive. */
function likePrefix(prefix: string): (name: string) => boolean {
  let src = '^'
  for (const ch of prefix) {
    if (ch === '_') src += '.'
    else if (ch === '%') src += '.*'
    else src += ch.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&')
  }
  const re = new RegExp(src, 'is')
  return (name) => re.test(name)
}

/** GET /traits: every trait matching the filters, in id order. */
export function listTraits(s: State, filters: TraitFilters = {}): NamedRecord[] {
  let traits = [...s.traits.values()]
  if (filters.nameIn) {
    const wanted = new Set(filters.nameIn)
    traits = traits.filter((t) => wanted.has(t.name))
  }
  if (filters.prefix !== undefined) {
    const match = likePrefix(filters.prefix)
    traits = traits.filter((t) => match(t.name))
  }
  if (filters.associated !== undefined) {
    const used = new Set<string>()
    for (const p of s.providers.values()) for (const t of p.traits) used.add(t)
    traits = traits.filter((t) => used.has(t.name) === filters.associated)
  }
  return traits.sort(byId)
}

/**
 * Parses GET /traits query values as Placement does; throws its 400s.
 * `name` is the last name= value, `associated` the last associated= value.
 */
export function parseTraitFilters(name: string | undefined, associated: string | undefined): TraitFilters {
  const filters: TraitFilters = {}
  if (name !== undefined) {
    const colon = name.indexOf(':')
    if (colon < 0) {
      throw badRequest(
        'Badly formatted name parameter. Expected name query string parameter in form: ' +
          `?name=[in|startswith]:[name1,name2|prefix]. Got: "${name}"`,
      )
    }
    const op = name.slice(0, colon)
    const value = name.slice(colon + 1)
    if (op === 'in') filters.nameIn = value.split(',')
    else if (op === 'startswith') filters.prefix = value
  }
  if (associated !== undefined) {
    const v = associated.toLowerCase()
    if (v !== 'true' && v !== 'false') {
      throw badRequest('The query parameter "associated" only accepts "true" or "false"')
    }
    filters.associated = v === 'true'
  }
  return filters
}

export function getTrait(s: State, name: string): NamedRecord {
  const t = s.traits.get(name)
  if (!t) throw notFound(`No such trait(s): ${name}.`)
  return t
}

/** PUT /traits/{name}: creates the trait unless it exists (the name is validated by the caller). */
export function ensureTrait(s: State, now: number, name: string): {trait: NamedRecord; created: boolean} {
  const existing = s.traits.get(name)
  if (existing) return {trait: existing, created: false}
  return {trait: s.addTrait(name, now), created: true}
}

/** DELETE /traits/{name}. */
export function deleteTrait(s: State, name: string): void {
  getTrait(s, name)
  if (!isCustomTrait(name)) throw badRequest(`Cannot delete standard trait ${name}.`)
  for (const p of s.providers.values()) {
    if (p.traits.has(name)) throw conflict(`The trait ${name} is in use by a resource provider.`)
  }
  s.removeTrait(name)
}

/** A provider's traits as records, in id order. */
export function providerTraits(s: State, p: Provider): NamedRecord[] {
  const out: NamedRecord[] = []
  for (const name of p.traits) {
    const t = s.traits.get(name)
    if (t) out.push(t)
  }
  return out.sort(byId)
}

function providerOr404(s: State, uuid: string, sep: string): Provider {
  const p = s.providers.get(uuid)
  if (!p) {
    const msg = `No resource provider with uuid ${uuid} found`
    throw notFound(sep ? `${msg}${sep}${msg}` : msg)
  }
  return p
}

/** GET /resource_providers/{uuid}/traits. */
export function getProviderTraits(s: State, uuid: string): {provider: Provider; traits: NamedRecord[]} {
  const p = providerOr404(s, uuid, ': ')
  return {provider: p, traits: providerTraits(s, p)}
}

export interface SetProviderTraitsInput {
  traits: string[]
  resource_provider_generation: number
}

/** PUT /resource_providers/{uuid}/traits: replaces the provider's traits, checking its generation. */
export function setProviderTraits(
  s: State,
  now: number,
  uuid: string,
  input: SetProviderTraitsInput,
): {provider: Provider; traits: NamedRecord[]} {
  const p = providerOr404(s, uuid, '')
  if (p.generation !== input.resource_provider_generation) {
    throw new PlacementError(
      409,
      "Resource provider's generation already changed. Please update the generation and try again.",
      ErrorCode.CONCURRENT_UPDATE,
    )
  }
  const wanted = [...new Set(input.traits)]
  const missing = wanted.filter((t) => !s.traits.has(t))
  if (missing.length) throw badRequest(`No such trait ${missing.join(', ')}`)
  replaceTraits(s, now, p, wanted)
  return {provider: p, traits: providerTraits(s, p)}
}

/** DELETE /resource_providers/{uuid}/traits: removes every trait (no generation check). */
export function clearProviderTraits(s: State, now: number, uuid: string): Provider {
  const p = providerOr404(s, uuid, '')
  replaceTraits(s, now, p, [])
  return p
}

/** Sets the provider's traits, bumping its generation only when the set changes. */
function replaceTraits(s: State, now: number, p: Provider, traits: string[]): void {
  const next = new Set(traits)
  const same = next.size === p.traits.size && [...next].every((t) => p.traits.has(t))
  if (same) return
  s.setTraits(p, next)
  s.bumpProvider(p, now)
}
