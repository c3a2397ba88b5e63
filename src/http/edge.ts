/**
 * The daemon behind a balancer: who the client is, and under which scheme, host and path
 * prefix it reached the API, for the access log, links and Location headers. The forwarding
 * headers (X-Forwarded-For/Proto/Host/Prefix, RFC 7239's Forwarded) are believed only when the
 * peer that sent them is a trusted proxy; from anyone else they are ignored, so a client cannot
 * choose its logged address or the links it is given. fastify walks X-Forwarded-For and reads
 * X-Forwarded-Proto and -Host itself (its trustProxy, given `trust` below); Forwarded (for what
 * X-Forwarded-* do not say) and X-Forwarded-Prefix are read here, with the same trust.
 */
import net from 'node:net'
import type {FastifyRequest} from 'fastify'
import {cleanPrefix, forwardedNode, linkHost, linkProtocol, parseForwarded, type ForwardedElement} from './forwarded.js'

/** What the app knows of its edge: which peers are proxies it trusts, and where it is published. */
export interface EdgeOptions {
  /** Whether a peer (an IP address) is a trusted proxy; no function: none is. */
  trust?: (address: string) => boolean
  /** The path the API is published under (clean, no trailing slash), for links; requests under it are served too. */
  basePath?: string
}

/** How the client reached the API, as its links and its log line should say. */
export interface EdgeView {
  /** The client's address: the peer's, or what a trusted proxy says. */
  client: string
  protocol: 'http' | 'https'
  /** The host (and port) the client asked for, when it is one a link may name. */
  host?: string
  /** The path prefix of every link ('' at the root). */
  prefix: string
}

/** An IPv4 address as IPv4 also when a dual-stack socket gives it IPv4-mapped (::ffff:a.b.c.d). */
export const plainAddress = (address: string): string => {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  return mapped ? mapped[1] : address
}

/**
 * The trust of a list of addresses and CIDR blocks (IPv4 and IPv6; `10.0.0.0/8`, `::1`,
 * `fd00::/8`): a function of an address, as fastify's trustProxy takes. Throws naming the first
 * entry that is neither.
 */
export function compileTrust(entries: string[]): (address: string) => boolean {
  const list = new net.BlockList()
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/')
    const type = net.isIPv4(address) ? 'ipv4' : net.isIPv6(address) ? 'ipv6' : undefined
    const max = type === 'ipv4' ? 32 : 128
    if (!type || extra !== undefined || (bits !== undefined && !(/^\d{1,3}$/.test(bits) && Number(bits) <= max))) {
      throw new Error(`'${entry}' is not an IP address or a CIDR block (such as 10.0.0.0/8 or fd00::/8)`)
    }
    if (bits === undefined) list.addAddress(address, type)
    else list.addSubnet(address, Number(bits), type)
  }
  return (address) => {
    const plain = plainAddress(address)
    const type = net.isIPv4(plain) ? 'ipv4' : net.isIPv6(plain) ? 'ipv6' : undefined
    return type !== undefined && list.check(plain, type)
  }
}

const views = new WeakMap<FastifyRequest, EdgeView>()

/** The request's edge view, worked out once per request. */
export function edgeOf(req: FastifyRequest, options: EdgeOptions | undefined): EdgeView {
  let view = views.get(req)
  if (!view) views.set(req, (view = readEdge(req, options ?? {})))
  return view
}

function readEdge(req: FastifyRequest, options: EdgeOptions): EdgeView {
  const peer = plainAddress(req.socket?.remoteAddress ?? '')
  const base = options.basePath ?? ''
  const rawHost = headerValue(req.headers.host)
  if (!options.trust?.(peer)) {
    // fastify's ip, protocol and host are the socket's and the Host header's here.
    return {client: req.ip, protocol: socketProtocol(req), host: linkHost(rawHost), prefix: base}
  }
  // A trusted peer. X-Forwarded-* come first, Forwarded fills in what they leave out: the usual
  // proxies (haproxy's option forwardfor, nginx's $proxy_add_x_forwarded_for) always add
  // X-Forwarded-For but pass a client's own Forwarded header on untouched, so a forged
  // Forwarded must not outweigh them. fastify has read X-Forwarded-For (walking back through
  // trusted proxies), -Proto and -Host (their last values: the nearest proxy's).
  const h = req.headers
  const element = h['x-forwarded-for'] && h['x-forwarded-proto'] && h['x-forwarded-host'] ? undefined : clientElement(req, options.trust)
  const node = element?.for === undefined ? undefined : forwardedNode(element.for)
  const client = h['x-forwarded-for'] || !node ? plainAddress(req.ip) : node.address
  const protocol = (h['x-forwarded-proto'] ? linkProtocol(req.protocol) : undefined) ?? linkProtocol(element?.proto) ?? socketProtocol(req)
  const host = (h['x-forwarded-host'] ? linkHost(req.host) : undefined) ?? linkHost(element?.host) ?? linkHost(rawHost)
  const prefix = cleanPrefix(headerValue(h['x-forwarded-prefix'])) ?? base
  return {client, protocol, host, prefix}
}

/**
 * The element of a trusted peer's Forwarded header that describes the client's request: each
 * proxy appends one, so walk back from the nearest while an element was added for a trusted
 * proxy; the first other one (or the first of all) is the client's. Undefined without a
 * Forwarded header, or with one that does not parse.
 */
function clientElement(req: FastifyRequest, trust: (address: string) => boolean): ForwardedElement | undefined {
  const header = headerValue(req.headers.forwarded)
  const elements = header === undefined ? null : parseForwarded(header)
  if (!elements) return undefined
  let i = elements.length - 1
  for (; i > 0; i--) {
    const node = elements[i].for === undefined ? undefined : forwardedNode(elements[i].for!)
    if (!(node?.ip && trust(node.address))) break
  }
  return elements[i]
}

/** The protocol of the connection itself. */
const socketProtocol = (req: FastifyRequest): 'http' | 'https' =>
  (req.socket as {encrypted?: boolean} | undefined)?.encrypted ? 'https' : 'http'

const headerValue = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v.join(', ') : v)

/**
 * The URL a route sees when the API is also served under its base path: `/placement/traits?x`
 * is `/traits?x`, `/placement` is `/`; anything else (`/traits`, `/placementx`) is as it came,
 * so the daemon answers both behind a proxy that strips the prefix and one that does not.
 */
export function stripBasePath(url: string, basePath: string): string {
  if (!basePath || !url.startsWith(basePath)) return url
  const rest = url.slice(basePath.length)
  if (rest === '') return '/'
  if (rest[0] === '/') return rest
  if (rest[0] === '?') return '/' + rest
  return url
}
