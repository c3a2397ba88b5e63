/**
 * One client for the Placement API with two transports: HTTP (a placemat daemon or any
 * OpenStack Placement endpoint) and local (the same fastify app, in process, on a SQLite
 * file). Both go through the same routes, so validation, transactions and generation
 * checks are the daemon's own.
 */

export interface ApiResponse<T = any> {
  status: number
  body: T
  headers: Record<string, string>
}

export interface RequestOptions {
  body?: unknown
  /** Microversion to ask for; defaults to the client's (latest). */
  version?: string
  query?: Record<string, string | string[] | undefined>
}

export interface Transport {
  readonly description: string
  send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<ApiResponse>
  close(): Promise<void>
  /** Where requests go over the network and the token they carry (none in process). */
  address?(): Promise<{url: string; token: string | undefined}>
}

/** A non-2xx answer, carrying Placement's error fields. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly code: string | undefined,
    readonly method: string,
    readonly path: string,
  ) {
    super(detail)
    this.name = 'ApiError'
  }
}

/** The transport could not reach anything. */
export class UnreachableError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'UnreachableError'
  }
}

/** Something answered, over TLS, with a certificate this process does not accept: nothing to start, an authority to give. */
export class CertificateError extends UnreachableError {
  override name = 'CertificateError'
}

/** Node's codes for a certificate no authority it knows signed (`--os-cacert` is the remedy). */
const UNTRUSTED = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
])
/** Node's codes for a certificate that is not valid for this endpoint now, whoever signed it. */
const INVALID = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_REVOKED',
  'CERT_SIGNATURE_FAILURE',
])

/** Why a request to `what` (an address, or "Keystone at URL") failed before any answer, as the error to throw. */
export function unreachable(what: string, err: unknown): UnreachableError {
  // fetch's error carries the socket's as its cause; node:http's is the socket's own.
  const e = err as {code?: string; message?: string; cause?: {code?: string; message?: string}}
  const cause = e.cause ?? (e.code ? e : undefined)
  const code = cause?.code
  if (code && UNTRUSTED.has(code)) {
    return new CertificateError(
      `the TLS certificate of ${what} is not trusted (${cause.message ?? code}): pass --os-cacert FILE or set OS_CACERT to the authority that signed it`,
    )
  }
  if (code && INVALID.has(code)) return new CertificateError(`the TLS certificate of ${what} is refused (${cause.message ?? code})`)
  return new UnreachableError(`cannot reach ${what} (${code ?? (err as Error).message})`)
}

export function buildPath(path: string, query?: RequestOptions['query']): string {
  if (!query) return path
  const qs = new URLSearchParams()
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined) continue
    for (const one of Array.isArray(v) ? v : [v]) qs.append(k, one)
  }
  const s = qs.toString()
  return s ? `${path}?${s}` : path
}

/** Placement's error detail carries webob's explanation first; keep the part that says what went wrong. */
export function shortDetail(detail: string): string {
  const parts = detail.split('\n\n')
  return (parts.length > 1 ? parts.slice(1).join(' ') : detail).trim() || detail.trim()
}

export class PlacementClient {
  constructor(
    readonly transport: Transport,
    readonly version = 'latest',
  ) {}

  async request<T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = {
      accept: 'application/json',
      'openstack-api-version': `placement ${opts.version ?? this.version}`,
    }
    let payload: string | undefined
    if (opts.body !== undefined) {
      headers['content-type'] = 'application/json'
      payload = JSON.stringify(opts.body)
    }
    const full = buildPath(path, opts.query)
    const res = await this.transport.send(method, full, headers, payload)
    if (res.status >= 400) {
      const e = res.body?.errors?.[0]
      throw new ApiError(res.status, shortDetail(e?.detail ?? String(res.body ?? '')), e?.code, method, full)
    }
    return res as ApiResponse<T>
  }

  get<T = any>(path: string, opts?: RequestOptions) {
    return this.request<T>('GET', path, opts).then((r) => r.body)
  }

  post<T = any>(path: string, body: unknown, opts?: RequestOptions) {
    return this.request<T>('POST', path, {...opts, body}).then((r) => r.body)
  }

  put<T = any>(path: string, body?: unknown, opts?: RequestOptions) {
    return this.request<T>('PUT', path, {...opts, body}).then((r) => r.body)
  }

  delete(path: string, opts?: RequestOptions) {
    return this.request('DELETE', path, opts).then(() => undefined)
  }

  close() {
    return this.transport.close()
  }
}
