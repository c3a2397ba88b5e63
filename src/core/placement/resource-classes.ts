/**
 * Resource classes (Placement 8.0.0 handlers/resource_class.py, objects/resource_class.py).
 *
 * Standard classes (os-resource-classes) have ids below 10000 and can be neither renamed
 * nor deleted; custom classes are named CUSTOM_* (the schemas enforce it) and can be
 * deleted only while no inventory uses them.
 */
import {badRequest, conflict, notFound} from '../errors.js'
import type {NamedRecord, State} from '../state/state.js'

/** Placement's ResourceClass.MIN_CUSTOM_RESOURCE_CLASS_ID. */
export const MIN_CUSTOM_RESOURCE_CLASS_ID = 10000

export const isStandardClass = (rc: NamedRecord) => rc.id < MIN_CUSTOM_RESOURCE_CLASS_ID

/** Every class in id order (standard classes first, in os-resource-classes order). */
export function listResourceClasses(s: State): NamedRecord[] {
  return [...s.classes.values()].sort((a, b) => a.id - b.id)
}

export function getResourceClass(s: State, name: string): NamedRecord {
  const rc = s.classes.get(name)
  if (!rc) throw notFound(`No such resource class ${name}.`)
  return rc
}

/** POST /resource_classes (1.2+). */
export function createResourceClass(s: State, now: number, name: string): NamedRecord {
  if (s.classes.has(name)) throw conflict(`Conflicting resource class already exists: ${name}`)
  return s.addClass(name, now)
}

/** PUT /resource_classes/{name} at 1.2-1.6: renames a custom class. */
export function renameResourceClass(s: State, now: number, name: string, newName: string): NamedRecord {
  const rc = getResourceClass(s, name)
  if (isStandardClass(rc)) throw badRequest(`Cannot update standard resource class ${name}`)
  if (newName !== name) {
    if (s.classes.has(newName)) throw conflict(`Resource class already exists: ${newName}`)
    s.renameClass(name, newName, now)
  }
  return s.classes.get(newName)!
}

/** PUT /resource_classes/{name} at 1.7+: creates the class unless it exists. */
export function ensureResourceClass(s: State, now: number, name: string): {rc: NamedRecord; created: boolean} {
  const existing = s.classes.get(name)
  if (existing) return {rc: existing, created: false}
  return {rc: s.addClass(name, now), created: true}
}

/** DELETE /resource_classes/{name}. */
export function deleteResourceClass(s: State, name: string): void {
  const rc = getResourceClass(s, name)
  if (isStandardClass(rc)) {
    throw badRequest(`Error in delete resource class: Cannot delete standard resource class ${name}.`)
  }
  for (const p of s.providers.values()) {
    if (p.inventories.has(name)) {
      throw conflict(`Error in delete resource class: Cannot delete resource class ${name}. Class is in use in inventory.`)
    }
  }
  s.removeClass(name)
}
