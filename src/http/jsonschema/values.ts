/** JSON types, equality and formats as python-jsonschema sees them. */
import {isUuidLike} from '../../core/uuids.js'
import {pyStrRepr} from './python-repr.js'
import {hasOwn, isObject} from './types.js'

export function isType(instance: unknown, type: string): boolean {
  switch (type) {
    case 'array':
      return Array.isArray(instance)
    case 'boolean':
      return typeof instance === 'boolean'
    case 'integer':
      return (typeof instance === 'number' && Number.isInteger(instance)) || typeof instance === 'bigint'
    case 'null':
      return instance === null
    case 'number':
      return typeof instance === 'number' || typeof instance === 'bigint'
    case 'object':
      return isObject(instance)
    case 'string':
      return typeof instance === 'string'
    default:
      throw new Error(`Unknown type ${pyStrRepr(type)} for validator`)
  }
}

export const isNumber = (v: unknown): v is number => typeof v === 'number'

/** jsonschema._utils.equal: Python equality, but booleans never equal numbers. */
export function jsEqual(a: unknown, b: unknown): boolean {
  if (typeof a === 'string' || typeof b === 'string') return a === b
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => jsEqual(x, b[i]))
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a)
    if (ka.length !== Object.keys(b).length) return false
    return ka.every((k) => hasOwn(b, k) && jsEqual(a[k], b[k]))
  }
  if (typeof a === 'boolean' || typeof b === 'boolean') return a === b
  return (a ?? null) === (b ?? null)
}

/**
 * A string that two JSON values share exactly when jsEqual holds: strings, numbers and
 * booleans kept apart, object keys in one order.
 */
export function equalityKey(value: unknown): string {
  if (typeof value === 'string') return 's' + JSON.stringify(value)
  if (typeof value === 'number') return 'n' + String(value)
  if (typeof value === 'boolean') return value ? 'T' : 'F'
  if (value === null || value === undefined) return 'N'
  if (Array.isArray(value)) return '[' + value.map(equalityKey).join(',') + ']'
  if (isObject(value)) {
    const keys = Object.keys(value).sort()
    return '{' + keys.map((k) => JSON.stringify(k) + ':' + equalityKey(value[k])).join(',') + '}'
  }
  return 'o' + String(value)
}

/** Python's == on JSON values (True == 1, 1 == 1.0). */
export function pyEqual(a: unknown, b: unknown): boolean {
  const num = (v: unknown) => (typeof v === 'boolean' ? Number(v) : v)
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => pyEqual(x, b[i]))
  }
  if (isObject(a) || isObject(b)) {
    if (!isObject(a) || !isObject(b)) return false
    const ka = Object.keys(a)
    if (ka.length !== Object.keys(b).length) return false
    return ka.every((k) => hasOwn(b, k) && pyEqual(a[k], b[k]))
  }
  return num(a ?? null) === num(b ?? null)
}

/** Placement registers oslo's is_uuid_like as the "uuid" format. */
export {isUuidLike}

export const FORMAT_CHECKERS: Record<string, (instance: unknown) => boolean> = {
  uuid: isUuidLike,
}
