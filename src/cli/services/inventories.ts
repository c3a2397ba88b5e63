/**
 * A provider's inventories as the inventory and usage commands read and write them. Writes: the
 * provider (or an aggregate's members) found, its inventories read with their generation,
 * merged, checked against what is in use and written, a concurrent update read again and
 * retried. The commands parse and print.
 */
import type {PlacementClient} from '../../client/client.js'
import {inventoryReplacement, type InventoryReplacement} from '../../core/placement/inventories.js'
import {badRequestError, notFoundError} from '../failure.js'
import {createClasses, listClasses} from './classes.js'
import {capacity, mergeInventories, type InventoryChanges, type InventoryRecord} from './inventory.js'
import type {ListedProvider} from '../../core/wire.js'
import {retryOnConcurrentUpdate} from '../backend/retry.js'
import {resolveProvider} from '../backend/provider-lookup.js'

export interface InventoryBody {
  resource_provider_generation: number
  inventories: Record<string, InventoryRecord>
}

export interface SetInventoriesOptions {
  /** Keep the classes not named and the fields not given. */
  amend?: boolean
  /** `target` is an aggregate uuid: each of its members. */
  aggregate?: boolean
  /** The bodies that would be written; nothing written. */
  dryRun?: boolean
  /** A class whose capacity would be below what is in use (Placement allows it). */
  onWarning?: (message: string) => void
}

/** A custom class's name as Placement takes it. */
const CUSTOM_CLASS = /^CUSTOM_[A-Z0-9_]+$/

/**
 * The classes `changes` names that the endpoint lacks: each custom one made (as apply and trait
 * add make theirs), or with `dryRun` only named; one that is not custom is refused, as the
 * write would be (a dry run checks what the real run checks). The classes made, or to make.
 */
async function makeCustomClasses(client: PlacementClient, changes: InventoryChanges, dryRun: boolean): Promise<string[]> {
  const known = new Set((await listClasses(client)).resource_classes.map((c) => c.name))
  const missing = [...changes.perClass.keys()].filter((rc) => !known.has(rc))
  const bad = missing.filter((rc) => !CUSTOM_CLASS.test(rc) || rc.length > 255)
  if (bad.length)
    throw badRequestError(
      `no resource class ${bad.join(', ')}: a standard class is one the endpoint lists (placemat class list), a custom one CUSTOM_ then A-Z, 0-9 and _`,
    )
  if (!dryRun) await createClasses(client, missing, true)
  return missing
}

/** Sets the inventories of `target` (a provider's name or uuid, or an aggregate's members); each provider's PUT answer (or, dry, its body). */
export async function setInventories(
  client: PlacementClient,
  target: string,
  changes: InventoryChanges,
  opts: SetInventoriesOptions = {},
): Promise<Array<{uuid: string; name: string; body: InventoryBody; replaced: InventoryReplacement; classesMade: string[]}>> {
  let providers: ListedProvider[]
  if (opts.aggregate) {
    providers = (await client.get('/resource_providers', {query: {member_of: target}})).resource_providers
    if (!providers.length) throw notFoundError(`no resource provider is a member of aggregate ${target}`)
  } else {
    providers = [await resolveProvider(client, target)]
  }
  const classesMade = await makeCustomClasses(client, changes, opts.dryRun ?? false)
  const results: Array<{uuid: string; name: string; body: InventoryBody; replaced: InventoryReplacement; classesMade: string[]}> = []
  for (const p of providers) {
    let replaced: InventoryReplacement = {dropped: [], reset: []}
    const body = await retryOnConcurrentUpdate(async () => {
      const [current, use] = await Promise.all([
        client.get(`/resource_providers/${p.uuid}/inventories`),
        client.get(`/resource_providers/${p.uuid}/usages`),
      ])
      const payload: InventoryBody = {
        resource_provider_generation: current.resource_provider_generation,
        inventories: mergeInventories(current.inventories, changes, opts.amend ?? false),
      }
      // Placement allows it (it only logs), but an operator should know before and after. A
      // reserved above the total is no capacity at all: Placement refuses it, and says so.
      for (const [rc, inv] of Object.entries(payload.inventories)) {
        const used = use.usages?.[rc] ?? 0
        if (capacity(inv) >= 0 && used > capacity(inv)) {
          opts.onWarning?.(`${rc} on ${p.name}: capacity ${capacity(inv)} would be below what is in use (${used})`)
        }
      }
      replaced = inventoryReplacement(current.inventories, payload.inventories)
      if (opts.dryRun) return payload
      return client.put<InventoryBody>(`/resource_providers/${p.uuid}/inventories`, payload)
    })
    results.push({uuid: p.uuid, name: p.name, body, replaced, classesMade})
  }
  return results
}

/** Deletes the inventories of `classes` (or all of them) of the provider `ref` names. */
export async function deleteInventories(client: PlacementClient, ref: string, classes: string[] | 'all'): Promise<void> {
  const p = await resolveProvider(client, ref)
  const base = `/resource_providers/${p.uuid}/inventories`
  if (classes === 'all') {
    await client.delete(base)
    return
  }
  if (classes.length === 1) {
    await client.delete(`${base}/${encodeURIComponent(classes[0])}`)
    return
  }
  await retryOnConcurrentUpdate(async () => {
    const current = await client.get(base)
    const missing = classes.filter((rc) => !(rc in current.inventories))
    if (missing.length) throw notFoundError(`no inventory of ${missing.join(', ')} on resource provider ${p.uuid}`)
    const inventories = {...current.inventories}
    for (const rc of classes) delete inventories[rc]
    await client.put(base, {resource_provider_generation: current.resource_provider_generation, inventories})
  })
}

/** The inventories of the provider `ref` names, with its usages. */
export async function readInventories(client: PlacementClient, ref: string): Promise<InventoryBody & {usages: Record<string, number>}> {
  const p = await resolveProvider(client, ref)
  const [inv, use] = await Promise.all([
    client.get(`/resource_providers/${p.uuid}/inventories`),
    client.get(`/resource_providers/${p.uuid}/usages`),
  ])
  return {...inv, usages: use.usages}
}

/** One class's inventory of the provider `ref` names, with what is used of it and its capacity. */
export async function readInventory(client: PlacementClient, ref: string, rc: string): Promise<Record<string, unknown>> {
  const p = await resolveProvider(client, ref)
  const [inv, use] = await Promise.all([
    client.get(`/resource_providers/${p.uuid}/inventories/${encodeURIComponent(rc)}`),
    client.get(`/resource_providers/${p.uuid}/usages`),
  ])
  return {resource_class: rc, ...inv, used: use.usages[rc] ?? 0, capacity: capacity(inv)}
}

/** The usages of the provider `ref` names (Placement's body), and its inventories when `withInventories`. */
export async function readUsages(
  client: PlacementClient,
  ref: string,
  withInventories: boolean,
): Promise<{
  name: string
  usage: {usages: Record<string, number>} & Record<string, unknown>
  inventories: Record<string, InventoryRecord>
}> {
  const p = await resolveProvider(client, ref)
  const [use, inv] = await Promise.all([
    client.get(`/resource_providers/${p.uuid}/usages`),
    withInventories ? client.get(`/resource_providers/${p.uuid}/inventories`) : undefined,
  ])
  return {name: p.name, usage: use, inventories: inv?.inventories ?? {}}
}
