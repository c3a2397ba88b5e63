/**
 * The daemon's edge flags (--trusted-proxies, --base-path, --tls-cert, --tls-key) and
 * placement.conf's [oslo_middleware] enable_proxy_headers_parsing, checked and turned into what
 * the server takes; a bad value (or certificate, key) stops the start with one line naming it,
 * before anything listens.
 *
 * Trust: --trusted-proxies names the proxies (addresses, CIDR blocks) whose forwarding headers
 * are believed. placement.conf's enable_proxy_headers_parsing = true means what it means to
 * Placement, every peer's headers believed (so any client may choose its logged address and the
 * host and prefix of its own links), and is warned about; --trusted-proxies overrides it (an
 * empty list: no proxy trusted).
 */
import {compileTrust} from '../http/edge.js'
import {cleanPrefix} from '../http/forwarded.js'
import {expiryWarning, readTlsFiles, TlsFilesError, type TlsFiles} from './tls-files.js'

/** An edge flag that cannot be used; the message names it. (A certificate or key that cannot be served: TlsFilesError.) */
export class EdgeOptionsError extends Error {}
export {TlsFilesError}

export interface EdgeFlags {
  'trusted-proxies'?: string
  'base-path'?: string
  'tls-cert'?: string
  'tls-key'?: string
}

/** What the server is given (ServerOptions.edge). */
export interface EdgeSettings {
  /** The trusted proxies' addresses and blocks, or 'any' (placement.conf's enable_proxy_headers_parsing). */
  trustedProxies?: string[] | 'any'
  /** The path the API is published under ('/placement'), without a trailing slash. */
  basePath?: string
  tls?: TlsFiles
}

export interface ResolvedEdge {
  settings: EdgeSettings
  /** The scheme the daemon serves: its URL's and its pid record's. */
  scheme: 'http' | 'https'
  warnings: string[]
}

/** The edge from the flags and placement.conf ({trustAnyProxy}: enable_proxy_headers_parsing = true). */
export function resolveEdge(flags: EdgeFlags, conf: {trustAnyProxy?: boolean} = {}): ResolvedEdge {
  const settings: EdgeSettings = {}
  const warnings: string[] = []
  const proxies = flags['trusted-proxies']
  if (proxies !== undefined) {
    const entries = proxies
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)
    try {
      compileTrust(entries)
    } catch (err) {
      throw new EdgeOptionsError(`--trusted-proxies: ${(err as Error).message}`)
    }
    if (entries.length) settings.trustedProxies = entries
  } else if (conf.trustAnyProxy) {
    settings.trustedProxies = 'any'
    warnings.push(
      '[oslo_middleware] enable_proxy_headers_parsing = true: forwarding headers are believed from every peer, so any client ' +
        'can choose the address logged for it; name the balancers with --trusted-proxies instead',
    )
  }
  const base = flags['base-path']
  if (base !== undefined) {
    const clean = cleanPrefix(base)
    if (clean === null) {
      throw new EdgeOptionsError(`--base-path: '${base}' is not a path such as /placement (segments of letters, digits, . _ ~ - and %XX)`)
    }
    if (clean) settings.basePath = clean
  }
  const cert = flags['tls-cert']
  const key = flags['tls-key']
  if ((cert === undefined) !== (key === undefined))
    throw new EdgeOptionsError(cert === undefined ? '--tls-key needs --tls-cert' : '--tls-cert needs --tls-key')
  if (cert !== undefined && key !== undefined) {
    settings.tls = {certFile: cert, keyFile: key}
    const expired = expiryWarning(settings.tls, readTlsFiles(settings.tls))
    if (expired) warnings.push(expired)
  }
  return {settings, scheme: settings.tls ? 'https' : 'http', warnings}
}

/** The trust function the app takes (none: no proxy trusted). */
export function trustOf(settings: EdgeSettings): ((address: string) => boolean) | undefined {
  if (settings.trustedProxies === 'any') return () => true
  return settings.trustedProxies?.length ? compileTrust(settings.trustedProxies) : undefined
}
