/**
 * The file's providers resolved against a State: each one's uuid (given, the existing
 * provider of that name, else uuid5 of its name), parent, aggregates as uuids, and the
 * custom classes and traits that must exist first.
 */
import {aggregateNameProblem} from '../aggregate-names.js'
import {inventoryProblems} from '../placement/inventories.js'
import type {State} from '../state/state.js'
import {aggregateUuid, canonicalUuid, isUuidLike, providerUuid} from '../uuids.js'
import type {ApplyFile, Desired} from './types.js'

export interface Resolution {
  desired: Desired[]
  /** File index by name and by uuid. */
  byName: Map<string, number>
  byUuid: Map<string, number>
  neededClasses: Set<string>
  neededTraits: Set<string>
  labels: Map<string, string>
  /** The names the file gives aggregates, by aggregate uuid. */
  aggregateNames: Map<string, string>
}

export function resolveDesired(file: ApplyFile, s: State, errors: string[]): Resolution {
  const labels = new Map<string, string>()
  const aggregateNames = new Map<string, string>()
  const nameAggregate = (uuid: string, name: string, where: string) => {
    const had = aggregateNames.get(uuid)
    if (had === name) return
    if (had !== undefined) errors.push(`${where}: aggregate ${uuid} is named both '${had}' and '${name}' (an aggregate has one name)`)
    else {
      const problem = aggregateNameProblem(name)
      if (problem) errors.push(`${where}: ${problem}`)
      aggregateNames.set(uuid, name)
    }
  }
  for (const [name, uuid] of file.aggregateNames) nameAggregate(uuid, name, `aggregates.${name}`)
  // Stored names first: the file's, and provider names, win.
  for (const n of s.aggregateNames.values()) labels.set(n.uuid, n.name)
  for (const [uuid, name] of aggregateNames) labels.set(uuid, name)
  for (const p of s.providers.values()) labels.set(p.uuid, p.name)

  const desired: Desired[] = []
  const byName = new Map<string, number>()
  const byUuid = new Map<string, number>()
  file.providers.forEach((raw, i) => {
    const uuid = raw.uuid ?? s.providerByName.get(raw.name)?.uuid ?? providerUuid(raw.name)
    if (byName.has(raw.name)) errors.push(`${raw.where}: name '${raw.name}' appears twice in the file`)
    if (byUuid.has(uuid)) errors.push(`${raw.where}: uuid ${uuid} appears twice in the file`)
    byName.set(raw.name, i)
    byUuid.set(uuid, i)
    desired.push({uuid, name: raw.name})
    labels.set(uuid, raw.name)
  })
  const parentOf = (ref: string, where: string): string | undefined => {
    if (isUuidLike(ref)) {
      const u = canonicalUuid(ref)
      if (byUuid.has(u) || s.providers.has(u)) return u
    }
    const i = byName.get(ref)
    if (i !== undefined) return desired[i].uuid
    const p = s.providerByName.get(ref)
    if (p) return p.uuid
    errors.push(`${where}: parent '${ref}' is neither in the file nor an existing provider`)
    return undefined
  }
  const aggRef = (ref: string) => (isUuidLike(ref) ? canonicalUuid(ref) : (file.aggregateNames.get(ref) ?? aggregateUuid(ref)))
  const neededClasses = new Set(file.resourceClasses)
  const neededTraits = new Set(file.traits)
  file.providers.forEach((raw, i) => {
    const d = desired[i]
    if (raw.parentIndex !== undefined) d.parent = desired[raw.parentIndex].uuid
    else if (raw.parentRef === null) d.parent = null
    else if (raw.parentRef !== undefined) d.parent = parentOf(raw.parentRef, raw.where)
    if (d.parent === d.uuid) errors.push(`${raw.where}: a provider cannot be its own parent`)
    if (raw.inventories) {
      d.inventories = raw.inventories
      for (const [rc, inv] of Object.entries(raw.inventories)) {
        for (const problem of inventoryProblems(inv)) errors.push(`provider ${raw.name}: inventory ${rc}: ${problem}`)
        if (s.classes.has(rc)) continue
        if (rc.startsWith('CUSTOM_')) neededClasses.add(rc)
        else errors.push(`${raw.where}: unknown resource class ${rc} (custom classes start with CUSTOM_)`)
      }
    }
    if (raw.traits) {
      // `!TRAIT` removes a trait the compute service owns, which the list alone leaves in place.
      d.traits = raw.traits.filter((t) => !t.startsWith('!'))
      d.traitsRemoved = raw.traits.filter((t) => t.startsWith('!')).map((t) => t.slice(1))
      for (const t of [...d.traits, ...d.traitsRemoved]) {
        if (s.traits.has(t)) continue
        if (t.startsWith('CUSTOM_')) neededTraits.add(t)
        else errors.push(`${raw.where}: unknown trait ${t} (custom traits start with CUSTOM_)`)
      }
    }
    if (raw.aggregates) {
      d.aggregates = [...new Set(raw.aggregates.map(aggRef))].sort()
      for (const a of raw.aggregates) {
        if (isUuidLike(a)) continue
        labels.set(aggRef(a), a)
        nameAggregate(aggRef(a), a, `${raw.where}.aggregates`)
      }
    }
  })
  return {desired, byName, byUuid, neededClasses, neededTraits, labels, aggregateNames}
}
