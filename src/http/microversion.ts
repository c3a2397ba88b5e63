/** Placement API microversions: negotiation through the OpenStack-API-Version header. */
import {Version} from '../core/version.js'

export {Version}

export const MIN_VERSION = [1, 0] as const
export const MAX_VERSION = [1, 39] as const
export const SERVICE_TYPE = 'placement'

export const minVersionString = () => `${MIN_VERSION[0]}.${MIN_VERSION[1]}`
export const maxVersionString = () => `${MAX_VERSION[0]}.${MAX_VERSION[1]}`

export type Negotiated = {ok: true; version: Version} | {ok: false; status: 400 | 406; detail: string}

const VERSION_RE = /^(\d+)\.(\d+)$/

/**
 * Picks the requested version from the header value(s), as microversion_parse does:
 * a comma separated list of "<service> <version>"; missing means the minimum.
 */
export function negotiate(header: string | string[] | undefined): Negotiated {
  let wanted: string | undefined
  const values = header === undefined ? [] : Array.isArray(header) ? header : [header]
  for (const value of values) {
    for (const part of value.split(',')) {
      const [service, ...rest] = part.trim().split(/\s+/)
      if (service?.toLowerCase() === SERVICE_TYPE && rest.length) wanted = rest.join(' ')
    }
  }
  if (wanted === undefined) return {ok: true, version: new Version(MIN_VERSION[0], MIN_VERSION[1])}
  if (wanted.toLowerCase() === 'latest') return {ok: true, version: new Version(MAX_VERSION[0], MAX_VERSION[1])}
  const m = VERSION_RE.exec(wanted)
  if (!m) return {ok: false, status: 400, detail: `invalid version string: ${wanted}`}
  const v = new Version(Number(m[1]), Number(m[2]))
  const tooLow = v.major < MIN_VERSION[0] || (v.major === MIN_VERSION[0] && v.minor < MIN_VERSION[1])
  const tooHigh = v.major > MAX_VERSION[0] || (v.major === MAX_VERSION[0] && v.minor > MAX_VERSION[1])
  if (tooLow || tooHigh) return {ok: false, status: 406, detail: `Unacceptable version header: ${wanted}`}
  return {ok: true, version: v}
}
