/**
 * What a proxy in front of the daemon says about the request it forwards, read strictly: RFC
 * 7239's Forwarded, X-Forwarded-Prefix, and the host and protocol a link may be built from.
 * Whatever does not parse is not used (never echoed into a link, a Location or the log); whether
 * the proxy is believed at all is edge.ts's question.
 */
import net from 'node:net'

/** One proxy's element of a Forwarded header: the parameters placemat uses, as sent. */
export interface ForwardedElement {
  for?: string
  proto?: string
  host?: string
}

// RFC 7230's token, and a quoted-string's contents (qdtext or quoted-pair).
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const QUOTED = /^"((?:[\t \x21\x23-\x5b\x5d-\x7e\x80-\xff]|\\[\t \x21-\x7e\x80-\xff])*)"$/

/**
 * The elements of a Forwarded header (`for=192.0.2.60;proto=https, for="[2001:db8::1]:4711"`),
 * in the order the proxies added them, or null when any part of it is not RFC 7239's syntax (a
 * header half understood is not trusted at all). Parameter names are case-insensitive; a
 * parameter given twice in one element makes the header invalid, as the RFC says.
 */
export function parseForwarded(header: string): ForwardedElement[] | null {
  const elements: ForwardedElement[] = []
  for (const element of splitOutsideQuotes(header, ',')) {
    if (element === null) return null
    // Empty list members and empty pairs are allowed (RFC 7230's list rule, RFC 7239's grammar).
    if (element.trim() === '') continue
    const out: ForwardedElement = {}
    const seen = new Set<string>()
    for (const pair of splitOutsideQuotes(element, ';')) {
      if (pair === null) return null
      const trimmed = pair.trim()
      if (trimmed === '') continue
      const eq = trimmed.indexOf('=')
      if (eq <= 0) return null
      const name = trimmed.slice(0, eq).toLowerCase()
      const raw = trimmed.slice(eq + 1)
      if (!TOKEN.test(name) || seen.has(name)) return null
      seen.add(name)
      let value: string
      if (TOKEN.test(raw)) value = raw
      else {
        const quoted = QUOTED.exec(raw)
        if (!quoted) return null
        value = quoted[1].replace(/\\(.)/g, '$1')
      }
      if (name === 'for' || name === 'proto' || name === 'host') out[name] = value
    }
    elements.push(out)
  }
  return elements.length ? elements : null
}

/** Splits at `sep` where it is not inside a quoted string; null for an unterminated quote. */
function splitOutsideQuotes(text: string, sep: string): (string | null)[] {
  const parts: string[] = []
  let start = 0
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quoted && c === '\\') i++
    else if (c === '"') quoted = !quoted
    else if (!quoted && c === sep) {
      parts.push(text.slice(start, i))
      start = i + 1
    }
  }
  if (quoted) return [null]
  parts.push(text.slice(start))
  return parts
}

/**
 * A Forwarded `for=` node as an address to log and to check against the trusted proxies: the IP
 * without its port or brackets, or `unknown` and an obfuscated `_name` as they are (RFC 7239
 * section 6); undefined for anything else.
 */
export function forwardedNode(node: string): {address: string; ip: boolean} | undefined {
  const v6 = /^\[([0-9A-Fa-f:.]+)\](?::(?:\d{1,5}|_[A-Za-z0-9._-]+))?$/.exec(node)
  if (v6) return net.isIPv6(v6[1]) ? {address: v6[1].toLowerCase(), ip: true} : undefined
  const v4 = /^([0-9.]+)(?::(?:\d{1,5}|_[A-Za-z0-9._-]+))?$/.exec(node)
  if (v4) return net.isIPv4(v4[1]) ? {address: v4[1], ip: true} : undefined
  if (node === 'unknown' || /^_[A-Za-z0-9._-]+$/.test(node)) return {address: node, ip: false}
  return undefined
}

/** http or https (lower case), from a forwarded protocol; undefined for anything else. */
export function linkProtocol(value: string | undefined): 'http' | 'https' | undefined {
  const v = value?.trim().toLowerCase()
  return v === 'http' || v === 'https' ? v : undefined
}

/** A host (name or IP, with an optional port) a link may name; undefined for anything else. */
export function linkHost(value: string | undefined): string | undefined {
  if (!value) return undefined
  const ok = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}))*\.?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/.test(
    value,
  )
  if (!ok || value.length > 255) return undefined
  if (value.startsWith('[') && !net.isIPv6(value.slice(1, value.indexOf(']')))) return undefined
  return value
}

/** Longest prefix taken from a header. */
const MAX_PREFIX = 256

/**
 * A path prefix the API is published under (`/placement`, `/cloud/placement`), without a
 * trailing slash; '' for the root (`/` or empty). Null for anything that is not a clean absolute
 * path: no scheme or `//host`, no space, control character, comma (several values), query,
 * fragment, backslash, `.` or `..` segment or empty segment; only unreserved characters and
 * percent escapes.
 */
export function cleanPrefix(value: string | undefined): string | null {
  if (value === undefined) return null
  if (value === '' || value === '/') return ''
  if (value.length > MAX_PREFIX || !value.startsWith('/')) return null
  const path = value.endsWith('/') ? value.slice(0, -1) : value
  const segments = path.slice(1).split('/')
  for (const s of segments) {
    if (s === '' || s === '.' || s === '..') return null
    if (!/^(?:[A-Za-z0-9._~-]|%[0-9A-Fa-f]{2})+$/.test(s)) return null
    if (/^(?:\.|%2[eE])+$/.test(s)) return null
  }
  return path
}
