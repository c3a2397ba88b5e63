/** Placement's error codes (placement/errors.py), sent in error bodies from microversion 1.23. */
export const ErrorCode = {
  DEFAULT: 'placement.undefined_code',
  INVENTORY_INUSE: 'placement.inventory.inuse',
  CONCURRENT_UPDATE: 'placement.concurrent_update',
  DUPLICATE_NAME: 'placement.duplicate_name',
  PROVIDER_IN_USE: 'placement.resource_provider.inuse',
  PROVIDER_CANNOT_DELETE_PARENT: 'placement.resource_provider.cannot_delete_parent',
  PROVIDER_NOT_FOUND: 'placement.resource_provider.not_found',
  QUERY_DUPLICATE_KEY: 'placement.query.duplicate_key',
  QUERY_BAD_VALUE: 'placement.query.bad_value',
  QUERY_MISSING_VALUE: 'placement.query.missing_value',
} as const

export type ErrorCodeValue =
  | (typeof ErrorCode)[keyof typeof ErrorCode]
  | typeof AFFINITY_VIOLATION
  | typeof DATABASE_UNAVAILABLE
  | typeof STOPPING
  | typeof SCHEMA_NOT_SERVED

/** placemat's own code: a topology rule that does not hold at write time (409). */
export const AFFINITY_VIOLATION = 'placemat.affinity_violation'

/** placemat's own code: the database could not serve the request (503). */
export const DATABASE_UNAVAILABLE = 'placemat.database_unavailable'

/** placemat's own code: the node is draining before it exits (503, health only). */
export const STOPPING = 'placemat.stopping'

/** placemat's own code: a newer release's contract moved the database past this node's release (503, health only). */
export const SCHEMA_NOT_SERVED = 'placemat.schema_not_served'

/**
 * A domain failure that every transport renders the same way: HTTP turns it into
 * Placement's error body, the CLI into a message and an exit code.
 */
export class PlacementError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly code: ErrorCodeValue = ErrorCode.DEFAULT,
    readonly headers: Record<string, string> = {},
    /** A title of its own instead of the status's (placemat's 503s say what is unavailable). */
    readonly title?: string,
  ) {
    super(detail)
    this.name = 'PlacementError'
  }
}

export const badRequest = (detail: string, code: ErrorCodeValue = ErrorCode.DEFAULT) => new PlacementError(400, detail, code)
export const notFound = (detail: string, code: ErrorCodeValue = ErrorCode.DEFAULT) => new PlacementError(404, detail, code)
export const conflict = (detail: string, code: ErrorCodeValue = ErrorCode.DEFAULT) => new PlacementError(409, detail, code)
export const concurrentUpdate = (detail: string) => new PlacementError(409, detail, ErrorCode.CONCURRENT_UPDATE)
