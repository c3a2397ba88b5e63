/**
 * The daemon behind a balancer, through inject(): forwarding headers are believed only from a
 * trusted peer (X-Forwarded-For/Proto/Host/Prefix, RFC 7239's Forwarded), a bad prefix is never
 * echoed, links and Location carry the prefix, the base path is served, and a client's global
 * request id is logged.
 */
import {afterEach, describe, expect, it} from 'vitest'
import {loggerOptions} from '../../src/http/access-log.js'
import {compileTrust} from '../../src/http/edge.js'
import type {EdgeOptions} from '../../src/http/edge.js'
import {testApi, type TestApi} from '../helpers/http-helpers.js'

const BALANCER = '10.0.0.5'
const RP = 'aaaaaaaa-0000-4000-8000-000000000001'

let api: TestApi | undefined
let lines: string[] = []
afterEach(async () => {
  await api?.close()
  api = undefined
  lines = []
})

async function start(edge?: EdgeOptions, streamAbove?: number): Promise<TestApi> {
  api = await testApi({
    edge,
    streamAbove,
    logger: loggerOptions('info', {write: (line: string) => void lines.push(line)}) as Record<string, unknown>,
  })
  return api
}

/** A request as a peer at `from` sends it, with the answer and its access-log line. */
async function send(from: string, method: string, url: string, headers: Record<string, string> = {}, body?: unknown) {
  const res = await api!.app.inject({
    method: method as any,
    url,
    remoteAddress: from,
    headers: {
      'x-auth-token': 'admin',
      'openstack-api-version': 'placement latest',
      host: 'placemat.internal:8778',
      ...(body === undefined ? {} : {'content-type': 'application/json'}),
      ...headers,
    },
    payload: body === undefined ? undefined : JSON.stringify(body),
  })
  const line = lines
    .map((l) => JSON.parse(l))
    .filter((l) => l.msg === 'request')
    .at(-1)
  return {status: res.statusCode, headers: res.headers, body: res.body ? JSON.parse(res.body) : undefined, line}
}

const trustBalancer = (): EdgeOptions => ({trust: compileTrust([`${BALANCER}/32`])})

describe('without trusted proxies', () => {
  it('ignores every forwarding header: address, scheme, host, prefix', async () => {
    await start()
    const r = await send(
      '127.0.0.1',
      'POST',
      '/resource_providers',
      {
        'x-forwarded-for': '203.0.113.9',
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'evil.example',
        'x-forwarded-prefix': '/placement',
        forwarded: 'for=198.51.100.1;proto=https;host=evil.example',
      },
      {name: 'cn1', uuid: RP},
    )
    expect(r.status).toBe(200)
    expect(r.headers.location).toBe(`http://placemat.internal:8778/resource_providers/${RP}`)
    expect(r.body.links[0]).toEqual({rel: 'self', href: `/resource_providers/${RP}`})
    expect(r.line.remote_addr).toBe('127.0.0.1')
  })

  it('ignores them from a peer that is not one of the trusted proxies', async () => {
    await start(trustBalancer())
    const r = await send(
      '10.0.0.6',
      'POST',
      '/resource_providers',
      {'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'https', 'x-forwarded-prefix': '/placement'},
      {name: 'cn1', uuid: RP},
    )
    expect(r.headers.location).toBe(`http://placemat.internal:8778/resource_providers/${RP}`)
    expect(r.line.remote_addr).toBe('10.0.0.6')
  })
})

describe('behind a trusted proxy', () => {
  it('takes X-Forwarded-For, -Proto, -Host and -Prefix into the log, links and Location', async () => {
    await start(trustBalancer())
    const h = {
      'x-forwarded-for': '203.0.113.9',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'cloud.example',
      'x-forwarded-prefix': '/placement',
    }
    const created = await send(BALANCER, 'POST', '/resource_providers', h, {name: 'cn1', uuid: RP})
    expect(created.headers.location).toBe(`https://cloud.example/placement/resource_providers/${RP}`)
    expect(created.body.links.map((l: any) => l.href)).toEqual(
      ['', '/inventories', '/usages', '/aggregates', '/traits', '/allocations'].map((rel) => `/placement/resource_providers/${RP}${rel}`),
    )
    expect(created.line.remote_addr).toBe('203.0.113.9')
    const listed = await send(BALANCER, 'GET', '/resource_providers', h)
    expect(listed.body.resource_providers[0].links[0].href).toBe(`/placement/resource_providers/${RP}`)
    const rc = await send(BALANCER, 'PUT', '/resource_classes/CUSTOM_GOLD', h)
    expect(rc.headers.location).toBe('https://cloud.example/placement/resource_classes/CUSTOM_GOLD')
    const classes = await send(BALANCER, 'GET', '/resource_classes/CUSTOM_GOLD', h)
    expect(classes.body.links).toEqual([{rel: 'self', href: '/placement/resource_classes/CUSTOM_GOLD'}])
    const trait = await send(BALANCER, 'PUT', '/traits/CUSTOM_FAST', h)
    expect(trait.headers.location).toBe('https://cloud.example/placement/traits/CUSTOM_FAST')
    const inv = await send(
      BALANCER,
      'POST',
      `/resource_providers/${RP}/inventories`,
      {...h, 'openstack-api-version': 'placement 1.4'},
      {resource_class: 'VCPU', total: 8},
    )
    expect(inv.status).toBe(201)
    expect(inv.headers.location).toBe(`https://cloud.example/placement/resource_providers/${RP}/inventories/VCPU`)
  })

  it('prefixes the links of a provider list sent in pieces too', async () => {
    await start(trustBalancer(), 0)
    await send(BALANCER, 'POST', '/resource_providers', {}, {name: 'cn1', uuid: RP})
    const listed = await send(BALANCER, 'GET', '/resource_providers', {'x-forwarded-prefix': '/placement'})
    expect(listed.body.resource_providers[0].links[0].href).toBe(`/placement/resource_providers/${RP}`)
  })

  it('walks X-Forwarded-For back through trusted proxies only: what a client put in front is not its address', async () => {
    await start({trust: compileTrust(['10.0.0.0/24'])})
    // The client forged 198.51.100.7; the outer balancer (10.0.0.4) appended the address it saw.
    const r = await send(BALANCER, 'GET', '/', {'x-forwarded-for': '198.51.100.7, 203.0.113.9, 10.0.0.4'})
    expect(r.line.remote_addr).toBe('203.0.113.9')
  })

  it("reads RFC 7239's Forwarded, walking back through trusted proxies", async () => {
    await start({trust: compileTrust(['10.0.0.0/24', 'fd00::/8'])})
    const r = await send(
      BALANCER,
      'POST',
      '/resource_providers',
      {
        forwarded:
          'for=198.51.100.7;proto=http;host=forged.example, for="[2001:db8:cafe::17]:4711";proto=https;host="cloud.example:8443", For=10.0.0.4;proto=http',
      },
      {name: 'cn1', uuid: RP},
    )
    expect(r.line.remote_addr).toBe('2001:db8:cafe::17')
    expect(r.headers.location).toBe(`https://cloud.example:8443/resource_providers/${RP}`)
    expect((await send(BALANCER, 'GET', '/', {forwarded: 'for="[fd00::1]", for=_hidden'})).line.remote_addr).toBe('_hidden')
    expect((await send(BALANCER, 'GET', '/', {forwarded: 'for=10.0.0.9;proto=https, for=10.0.0.4'})).line.remote_addr).toBe('10.0.0.9')
    // A Forwarded header that does not parse is not used at all.
    for (const bad of [
      'for=1.2.3.4;proto',
      'for="1.2.3.4',
      'for=1.2.3.4;for=5.6.7.8',
      'for=a b',
      'for=1.2.3.4;proto=https"',
      'for=300.1.1.1',
    ]) {
      expect((await send(BALANCER, 'GET', '/', {forwarded: bad})).line.remote_addr, bad).toBe(BALANCER)
    }
  })

  it('lets X-Forwarded-* outweigh Forwarded, which a proxy adding X-Forwarded-For may pass on from the client untouched', async () => {
    await start(trustBalancer())
    const forged = {forwarded: 'for=198.51.100.7;proto=http;host=forged.example'}
    const r = await send(
      BALANCER,
      'POST',
      '/resource_providers',
      {...forged, 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'cloud.example'},
      {name: 'cn1', uuid: RP},
    )
    expect(r.line.remote_addr).toBe('203.0.113.9')
    expect(r.headers.location).toBe(`https://cloud.example/resource_providers/${RP}`)
    // What X-Forwarded-* leave out, Forwarded says.
    const partly = await send(BALANCER, 'PUT', '/traits/CUSTOM_A', {
      forwarded: 'for=198.51.100.7;proto=https;host=cloud.example',
      'x-forwarded-for': '203.0.113.9',
    })
    expect(partly.line.remote_addr).toBe('203.0.113.9')
    expect(partly.headers.location).toBe('https://cloud.example/traits/CUSTOM_A')
  })

  it('never echoes a prefix that is not a clean path: the base path (or none) is used instead', async () => {
    await start({...trustBalancer(), basePath: '/placement'})
    for (const bad of [
      '/a b',
      '//evil.com',
      'evil.com',
      'https://evil.com/x',
      '/a/../b',
      '/a/./b',
      '/a//b',
      '/a?b=1',
      '/a#b',
      '/a\\b',
      '/a,/b',
      '/%',
      '/a\u00e9',
      '/' + 'x'.repeat(300),
    ]) {
      const r = await send(BALANCER, 'POST', '/resource_providers', {'x-forwarded-prefix': bad}, {name: `cn-${lines.length}`})
      expect(r.status, bad).toBe(200)
      expect(r.body.links[0].href, bad).toMatch(/^\/placement\/resource_providers\/[0-9a-f-]{36}$/)
      expect(r.headers.location, bad).toMatch(/^http:\/\/placemat\.internal:8778\/placement\/resource_providers\//)
    }
    // A header with a line break never reaches the app (Node refuses it); '/' means the root.
    const root = await send(BALANCER, 'POST', '/resource_providers', {'x-forwarded-prefix': '/'}, {name: 'at-root'})
    expect(root.body.links[0].href).toMatch(/^\/resource_providers\//)
    const nested = await send(BALANCER, 'POST', '/resource_providers', {'x-forwarded-prefix': '/cloud/placement-api/'}, {name: 'nested'})
    expect(nested.body.links[0].href).toMatch(/^\/cloud\/placement-api\/resource_providers\//)
  })

  it('names no host it cannot vouch for: a bad forwarded host or scheme falls back to the request’s own', async () => {
    await start(trustBalancer())
    const r = await send(
      BALANCER,
      'POST',
      '/resource_providers',
      {'x-forwarded-host': 'evil.example/x', 'x-forwarded-proto': 'javascript'},
      {name: 'cn1', uuid: RP},
    )
    expect(r.headers.location).toBe(`http://placemat.internal:8778/resource_providers/${RP}`)
  })
})

describe('a base path', () => {
  it('is served and named: requests with or without it, links and Location under it', async () => {
    await start({basePath: '/placement'})
    const created = await send('127.0.0.1', 'POST', '/placement/resource_providers', {}, {name: 'cn1', uuid: RP})
    expect(created.status).toBe(200)
    expect(created.headers.location).toBe(`http://placemat.internal:8778/placement/resource_providers/${RP}`)
    expect(created.body.links[0].href).toBe(`/placement/resource_providers/${RP}`)
    expect(created.line.path).toBe('/placement/resource_providers')
    const stripped = await send('127.0.0.1', 'GET', `/resource_providers/${RP}`)
    expect(stripped.status).toBe(200)
    expect(stripped.body.links[0].href).toBe(`/placement/resource_providers/${RP}`)
    expect((await send('127.0.0.1', 'GET', '/placement')).body.versions[0].id).toBe('v1.0')
    expect((await send('127.0.0.1', 'GET', '/placement?x=1')).status).toBe(200)
    expect((await send('127.0.0.1', 'GET', '/placement/resource_providers?name=cn1')).body.resource_providers).toHaveLength(1)
    expect((await send('127.0.0.1', 'GET', '/placementx/resource_providers')).status).toBe(404)
    // A method no route has is refused for the path under the base path, as at the root.
    const refused = await send('127.0.0.1', 'PROPFIND', '/placement/resource_providers')
    expect([refused.status, refused.headers.allow]).toEqual([405, 'GET, POST'])
    // An untrusted peer's X-Forwarded-Prefix changes nothing.
    const spoofed = await send('127.0.0.1', 'GET', `/placement/resource_providers/${RP}`, {'x-forwarded-prefix': '/elsewhere'})
    expect(spoofed.body.links[0].href).toBe(`/placement/resource_providers/${RP}`)
  })
})

describe("a client's global request id", () => {
  it('is logged when well formed, ignored otherwise; the answer keeps placemat’s own id', async () => {
    await start()
    const global = 'req-0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9'
    const r = await send('127.0.0.1', 'GET', '/resource_providers', {'x-openstack-request-id': global})
    expect(r.status).toBe(200)
    expect(r.line.global_request_id).toBe(global)
    expect(r.headers['x-openstack-request-id']).toMatch(/^req-[0-9a-f-]{36}$/)
    expect(r.headers['x-openstack-request-id']).not.toBe(global)
    expect(r.line.request_id).toBe(r.headers['x-openstack-request-id'])
    for (const bad of [
      'req-0F1E2D3C-4B5A-4978-8695-A4B3C2D1E0F9',
      'req-123',
      '0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9',
      `${global}x`,
      `${global}, ${global}`,
      'req-0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9\u0000',
    ]) {
      const r2 = await send('127.0.0.1', 'GET', '/resource_providers', {'x-openstack-request-id': bad}).catch(() => undefined)
      if (!r2) continue // a header Node itself refuses
      expect(r2.status, bad).toBe(200)
      expect(r2.line.global_request_id, bad).toBeUndefined()
    }
  })
})

describe('compileTrust', () => {
  it('matches addresses and blocks, IPv4-mapped too, and refuses what is neither', () => {
    const trust = compileTrust(['10.0.0.0/8', '192.0.2.7', '::1', 'fd00::/8'])
    expect(trust('10.1.2.3')).toBe(true)
    expect(trust('::ffff:10.1.2.3')).toBe(true)
    expect(trust('192.0.2.7')).toBe(true)
    expect(trust('192.0.2.8')).toBe(false)
    expect(trust('::1')).toBe(true)
    expect(trust('fd12::5')).toBe(true)
    expect(trust('2001:db8::1')).toBe(false)
    expect(trust('not-an-ip')).toBe(false)
    for (const bad of ['10.0.0.0/33', 'host.example', '10.0.0.0/8/1', '::1/129', '', '10.0.0.1/x']) {
      expect(() => compileTrust([bad]), bad).toThrow(/is not an IP address or a CIDR block/)
    }
  })
})
