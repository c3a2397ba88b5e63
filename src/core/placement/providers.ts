import {randomUUID} from 'node:crypto'
import {ErrorCode, PlacementError, badRequest, conflict, notFound} from '../errors.js'
import {newProvider, type Provider, type State} from '../state/state.js'

export function getProvider(s: State, uuid: string): Provider {
  const p = s.providers.get(uuid)
  if (!p) throw notFound(`No resource provider with uuid ${uuid} found`)
  return p
}

export interface CreateProviderInput {
  uuid?: string
  name: string
  parent_provider_uuid?: string | null
}

export function createProvider(s: State, now: number, input: CreateProviderInput): Provider {
  const uuid = input.uuid ?? randomUUID()
  const dupes: string[] = []
  if (s.providers.has(uuid)) dupes.push(`uuid: ${uuid}`)
  if (s.providerByName.has(input.name)) dupes.push(`name: ${input.name}`)
  if (dupes.length) {
    throw conflict(`Conflicting resource provider ${dupes.join(', ')} already exists.`, ErrorCode.DUPLICATE_NAME)
  }
  const fail = (reason: string) =>
    badRequest(`Unable to create resource provider "${input.name}", ${uuid}: Object action create failed because: ${reason}`)
  let parent: Provider | null = null
  if (input.parent_provider_uuid != null) {
    if (input.parent_provider_uuid === uuid) {
      throw fail('parent provider UUID cannot be same as UUID. Please set parent provider UUID to None if there is no parent.')
    }
    parent = s.providers.get(input.parent_provider_uuid) ?? null
    if (!parent) throw fail('parent provider UUID does not exist.')
  }
  const p = newProvider(uuid, input.name, parent, now)
  s.addProvider(p)
  return p
}

export interface UpdateProviderInput {
  name?: string
  parent_provider_uuid?: string | null
}

/** Renames and/or re-parents. Placement does not bump the generation for either. */
export function updateProvider(
  s: State,
  now: number,
  uuid: string,
  input: UpdateProviderInput,
  opts: {allowReparenting: boolean},
): Provider {
  const p = getProvider(s, uuid)
  const fail = (action: string, reason: string) =>
    badRequest(`Unable to save resource provider ${uuid}: Object action ${action} failed because: ${reason}`)
  let newParent: Provider | null | undefined
  if ('parent_provider_uuid' in input && input.parent_provider_uuid !== undefined) {
    const parentUuid = input.parent_provider_uuid
    if (parentUuid !== null) {
      const parent = s.providers.get(parentUuid)
      if (!parent) throw fail('create', 'parent provider UUID does not exist.')
      if (p.parent !== null && p.parent !== parent.uuid && !opts.allowReparenting) {
        throw fail('update', 're-parenting a provider is not currently allowed.')
      }
      if (s.subtree(p.uuid).some((q) => q.uuid === parent.uuid)) {
        throw fail('update', 'creating loop in the provider tree is not allowed.')
      }
      newParent = parent
    } else if (p.parent !== null) {
      if (!opts.allowReparenting) throw fail('update', 'un-parenting a provider is not currently allowed.')
      newParent = null
    }
  }
  if (input.name !== undefined && input.name !== p.name) {
    if (s.providerByName.has(input.name)) {
      throw conflict(`Conflicting resource provider ${input.name} already exists.`, ErrorCode.DUPLICATE_NAME)
    }
    s.renameProvider(p, input.name)
  }
  if (newParent !== undefined && newParent?.uuid !== p.parent) s.reparentProvider(p, newParent)
  p.updatedAt = now
  s.markProvider(p, 'row')
  return p
}

export function deleteProvider(s: State, uuid: string): void {
  const p = s.providers.get(uuid)
  if (!p) throw notFound(`No resource provider with uuid ${uuid} found for delete`)
  if (p.children.size > 0) {
    throw conflict(
      `Unable to delete parent resource provider ${uuid}: It has child resource providers.`,
      ErrorCode.PROVIDER_CANNOT_DELETE_PARENT,
    )
  }
  if (p.allocations.size > 0) {
    throw conflict(`Unable to delete resource provider ${uuid}: Resource provider has allocations.`, ErrorCode.PROVIDER_IN_USE)
  }
  s.removeProvider(p)
}

/** Raises Placement's 409 placement.concurrent_update when a caller's generation is stale. */
export function checkGeneration(p: Provider, generation: number, message: string): void {
  if (p.generation !== generation) throw new PlacementError(409, message, ErrorCode.CONCURRENT_UPDATE)
}
