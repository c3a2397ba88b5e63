import {createHash} from 'node:crypto'

/** oslo_utils.uuidutils.is_uuid_like, as Placement uses it for every uuid it accepts. */
export function isUuidLike(value: unknown): boolean {
  if (typeof value !== 'string') return false
  const stripped = value
    .replaceAll('urn:', '')
    .replaceAll('uuid:', '')
    .replace(/^[{}]+|[{}]+$/g, '')
    .replaceAll('-', '')
  return /^[0-9a-fA-F]{32}$/.test(stripped)
}

/**
 * The one form placemat stores and answers: lower case hex with dashes, whatever form
 * is_uuid_like accepted (braces, a urn:uuid: prefix, no dashes, upper case).
 */
export function canonicalUuid(value: string): string {
  const h = value.replaceAll('urn:', '').replaceAll('uuid:', '').replace(/[{}-]/g, '').toLowerCase()
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

/**
 * Name-based (version 5, SHA-1) uuids as RFC 4122 and Python's uuid.uuid5 make them, so
 * that the same name gives the same uuid everywhere:
 *   python3 -c "import uuid; print(uuid.uuid5(uuid.UUID(NAMESPACE), 'aggregate:rack1'))"
 */
export function uuid5(name: string, namespace: string): string {
  const ns = Buffer.from(namespace.replace(/-/g, ''), 'hex')
  const hash = createHash('sha1').update(ns).update(Buffer.from(name, 'utf8')).digest()
  hash[6] = (hash[6] & 0x0f) | 0x50
  hash[8] = (hash[8] & 0x3f) | 0x80
  return canonicalUuid(hash.subarray(0, 16).toString('hex'))
}

/**
 * placemat's one namespace for every name it turns into a uuid, each kind with its prefix:
 * "provider:NAME" and "aggregate:NAME" in apply files, "rack:NAME", "row:NAME", "room:NAME"
 * for the topology, "consumer:NAME-i" for spread claims.
 */
export const NAMES_NAMESPACE = '3f554320-88f4-4a12-8780-e844d459fa6f'

/**
 * The namespace racks, rows and rooms had before they joined NAMES_NAMESPACE (migration
 * 0004 moves stored ones; plain-Placement applies move hosts out of the old aggregates).
 */
export const LEGACY_TOPOLOGY_NAMESPACE = '5b0c7d1e-9a3f-4e2b-8c6d-0f1a2b3c4d5e'

/** The uuid `placemat apply` gives an aggregate named `name`. */
export const aggregateUuid = (name: string) => uuid5(`aggregate:${name}`, NAMES_NAMESPACE)

/** The uuid `placemat apply` gives a new provider named `name` when the file gives none. */
export const providerUuid = (name: string) => uuid5(`provider:${name}`, NAMES_NAMESPACE)
