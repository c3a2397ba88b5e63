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
