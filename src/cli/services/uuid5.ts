/**
 * Name-based (version 5, SHA-1) uuids, as RFC 4122 and Python's uuid.uuid5 make them:
 * `placemat apply` derives aggregate uuids from aggregate names, and uuids of new
 * providers from their names, so that the same file gives the same uuids everywhere.
 *
 *   python3 -c "import uuid; print(uuid.uuid5(uuid.UUID('3f554320-88f4-4a12-8780-e844d459fa6f'), 'aggregate:rack1'))"
 */
import {createHash} from 'node:crypto'

/** placemat's fixed namespace for names in apply files. */
export const PLACEMAT_NAMESPACE = '3f554320-88f4-4a12-8780-e844d459fa6f'

export function uuid5(name: string, namespace = PLACEMAT_NAMESPACE): string {
  const ns = Buffer.from(namespace.replace(/-/g, ''), 'hex')
  const hash = createHash('sha1').update(ns).update(Buffer.from(name, 'utf8')).digest()
  const b = hash.subarray(0, 16)
  b[6] = (b[6] & 0x0f) | 0x50
  b[8] = (b[8] & 0x3f) | 0x80
  const h = b.toString('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

/** The uuid `placemat apply` gives an aggregate named `name`. */
export const aggregateUuid = (name: string) => uuid5(`aggregate:${name}`)

/** The uuid `placemat apply` gives a new provider named `name` when the file gives none. */
export const providerUuid = (name: string) => uuid5(`provider:${name}`)
