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
