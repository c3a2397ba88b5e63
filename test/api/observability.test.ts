/**
 * What an operator watches: the access log (one JSON line per request, no credential in it),
 * GET /metrics (Prometheus text, admin only unless metricsPublic) and GET /placemat/v1/health.
 */
import {afterEach, describe, expect, it, vi} from 'vitest'
import type {Inventory} from '../../src/core/state/state.js'
import {loggerOptions} from '../../src/http/access-log.js'
import {inv, testApi, type TestApi} from '../helpers/http-helpers.js'
import {migrations} from '../../src/store/schema.js'
import {RELEASE} from '../../src/store/release.js'
import {sql} from 'kysely'

const RP1 = 'bbbbbbbb-0000-4000-8000-000000000001'
const RP2 = 'bbbbbbbb-0000-4000-8000-000000000002'
const C1 = 'cccccccc-0000-4000-8000-000000000001'
const C2 = 'cccccccc-0000-4000-8000-000000000002'
const PROJECT = 'dddddddd-0000-4000-8000-000000000001'
const USER = 'eeeeeeee-0000-4000-8000-000000000001'
const SECRET = 'admin:s3cr3t-token-value'

let api: TestApi
afterEach(async () => {
  vi.restoreAllMocks()
  await api?.close()
})

/** An app whose log lines are kept (parsed) instead of written to stdout. */
async function loggedApi(level: 'info' | 'error' = 'info') {
  const lines: string[] = []
  api = await testApi({logger: loggerOptions(level, {write: (line: string) => void lines.push(line)}) as Record<string, unknown>})
  return {lines, records: () => lines.map((l) => JSON.parse(l) as Record<string, any>)}
}

async function provider(uuid: string, name: string, inventories: Record<string, Inventory>) {
  expect((await api.call('POST', '/resource_providers', {uuid, name})).status).toBe(200)
  await api.store.write((s, now) => {
    const p = s.providers.get(uuid)!
    for (const [rc, i] of Object.entries(inventories)) s.setInventory(p, rc, i)
    s.bumpProvider(p, now)
  })
}

const allocation = (rp: string, resources: Record<string, number>, generation: number | null) => ({
  allocations: {[rp]: {resources}},
  project_id: PROJECT,
  user_id: USER,
  consumer_generation: generation,
  consumer_type: 'INSTANCE',
})

async function scrape(headers: Record<string, string> = {}) {
  const res = await api.app.inject({method: 'GET', url: '/metrics', headers: {'x-auth-token': 'admin', ...headers}})
  expect(res.statusCode).toBe(200)
  return res.body
}

/** The value of one sample line (`name{labels} value`), or undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!m || m[1] !== name) continue
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]))
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3])
  }
  return undefined
}

describe('access log', () => {
  it('writes one JSON line per request with its method, path, query, status, time, request id and address', async () => {
    const log = await loggedApi()
    const res = await api.app.inject({
      method: 'GET',
      url: '/resource_providers?name=rp1&resources=VCPU:1',
      headers: {'x-auth-token': SECRET, 'openstack-api-version': 'placement 1.20', authorization: 'Bearer other-secret'},
    })
    expect(res.statusCode).toBe(200)
    const requestId = res.headers['x-openstack-request-id']
    const records = log.records()
    const line = records.find((r) => r.request_id === requestId)!
    // the only line the request left: fastify's own "incoming request" / "request completed" are off
    expect(records.filter((r) => r.request_id === line.request_id)).toEqual([line])
    expect(line).toMatchObject({
      level: 30,
      msg: 'request',
      method: 'GET',
      path: '/resource_providers',
      query: 'name=rp1&resources=VCPU:1',
      status: 200,
      request_id: requestId,
      remote_addr: '127.0.0.1',
      microversion: '1.20',
    })
    expect(line.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(typeof line.duration_ms).toBe('number')
    expect(line.duration_ms).toBeGreaterThanOrEqual(0)
    const all = log.lines.join('\n')
    expect(all).not.toContain('s3cr3t')
    expect(all).not.toContain('other-secret')
  })

  it("censors credential headers should a request's headers ever be logged", async () => {
    const log = await loggedApi()
    api.app.log.info({headers: {'x-auth-token': SECRET, authorization: 'Basic s3cr3t', cookie: 's3cr3t', accept: '*/*'}}, 'headers')
    expect(log.records()[0].headers).toEqual({
      'x-auth-token': '[redacted]',
      authorization: '[redacted]',
      cookie: '[redacted]',
      accept: '*/*',
    })
    expect(log.lines.join('\n')).not.toContain('s3cr3t')
  })

  it('logs refused requests too, without the token they carried', async () => {
    const log = await loggedApi()
    const res = await api.app.inject({method: 'GET', url: '/resource_providers', headers: {'x-auth-token': 'not-admin-s3cr3t'}})
    expect(res.statusCode).toBe(403)
    const line = log.records().find((r) => r.msg === 'request')!
    expect(line).toMatchObject({status: 403, path: '/resource_providers'})
    expect(line).not.toHaveProperty('query')
    expect(log.lines.join('\n')).not.toContain('s3cr3t')
  })

  it('logs a 5xx at error level with the error, even when only errors are logged', async () => {
    const log = await loggedApi('error')
    vi.spyOn(api.store, 'refresh').mockRejectedValue(new Error('disk on fire'))
    const res = await api.app.inject({method: 'GET', url: '/placemat/v1/topology', headers: {'x-auth-token': SECRET}})
    expect(res.statusCode).toBe(500)
    const records = log.records()
    const access = records.find((r) => r.msg === 'request')!
    expect(access).toMatchObject({level: 50, status: 500, path: '/placemat/v1/topology', error: 'disk on fire'})
    // the error itself, with its stack, from the error handler
    const trace = records.find((r) => r.err?.message === 'disk on fire')!
    expect(trace.level).toBe(50)
    expect(trace.err.stack).toContain('disk on fire')
    // a successful request leaves nothing at this level
    log.lines.length = 0
    vi.restoreAllMocks()
    expect((await api.call('GET', '/resource_providers')).status).toBe(200)
    expect(log.lines).toEqual([])
    expect(records.map((r) => JSON.stringify(r)).join('\n')).not.toContain('s3cr3t')
  })
})

describe('GET /metrics', () => {
  it('needs the admin token unless metricsPublic', async () => {
    api = await testApi()
    expect((await api.app.inject({method: 'GET', url: '/metrics'})).statusCode).toBe(401)
    expect((await api.app.inject({method: 'GET', url: '/metrics', headers: {'x-auth-token': 'user'}})).statusCode).toBe(403)
    const ok = await api.app.inject({
      method: 'GET',
      url: '/placemat/v1/metrics',
      headers: {'x-auth-token': 'admin', accept: 'text/plain;version=0.0.4;q=0.9,*/*;q=0.1'},
    })
    expect(ok.statusCode).toBe(200)
    expect(ok.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8')
    await api.close()

    api = await testApi({metricsPublic: true})
    const open = await api.app.inject({method: 'GET', url: '/metrics', headers: {accept: 'text/plain;version=0.0.4'}})
    expect(open.statusCode).toBe(200)
    expect(open.body).toContain('# TYPE placemat_http_requests_total counter')
  })

  it('takes the admin token as Prometheus sends it (Authorization: Bearer), and only there', async () => {
    const token = 'a-metrics-admin-token-0123456789'
    api = await testApi({auth: 'token', adminToken: token})
    const get = (url: string, headers: Record<string, string>) => api.app.inject({method: 'GET', url, headers})
    for (const url of ['/metrics', '/placemat/v1/metrics']) {
      const ok = await get(url, {authorization: `Bearer ${token}`})
      expect(ok.statusCode, url).toBe(200)
      expect(ok.body).toContain('# TYPE placemat_http_requests_total counter')
      expect((await get(url, {authorization: `bearer ${token}`})).statusCode).toBe(200)
      expect((await get(url, {'x-auth-token': token})).statusCode).toBe(200)
      // a wrong token, no token, another scheme: refused as a missing or wrong X-Auth-Token is
      for (const authorization of [`Bearer ${token}x`, 'Bearer ', 'Bearer', `Basic ${token}`, token]) {
        const refused = await get(url, {authorization})
        expect(refused.statusCode, authorization).toBe(401)
        expect(refused.json().errors[0].title).toBe('Unauthorized')
      }
      // X-Auth-Token, when sent, is the token: a right bearer beside a wrong one does not pass
      expect((await get(url, {'x-auth-token': 'wrong', authorization: `Bearer ${token}`})).statusCode).toBe(401)
    }
    // Placement's own routes take X-Auth-Token only
    expect((await get('/resource_providers', {authorization: `Bearer ${token}`})).statusCode).toBe(401)
    expect((await get('/resource_providers', {'x-auth-token': token})).statusCode).toBe(200)
    await api.close()

    // noauth2: the bearer token is read as USER[:PROJECT] like X-Auth-Token, so a non-admin gets 403
    api = await testApi()
    expect((await get('/metrics', {authorization: 'Bearer admin'})).statusCode).toBe(200)
    expect((await get('/metrics', {authorization: 'Bearer user'})).statusCode).toBe(403)
    expect((await get('/metrics', {authorization: 'Basic admin'})).statusCode).toBe(401)
  })

  it('counts requests by route pattern, never by raw URL', async () => {
    const log = await loggedApi()
    await provider(RP1, 'rp1', {VCPU: inv(8)})
    for (let i = 0; i < 3; i++) expect((await api.call('GET', `/resource_providers/${RP1}`)).status).toBe(200)
    expect((await api.call('GET', `/resource_providers/${RP2}`)).status).toBe(404)
    expect((await api.call('GET', '/no/such/thing')).status).toBe(404)
    const text = await scrape()
    expect(sample(text, 'placemat_http_requests_total', {method: 'GET', route: '/resource_providers/:uuid', status: '200'})).toBe(3)
    expect(sample(text, 'placemat_http_requests_total', {method: 'GET', route: '/resource_providers/:uuid', status: '404'})).toBe(1)
    expect(sample(text, 'placemat_http_requests_total', {method: 'GET', route: 'unmatched', status: '404'})).toBe(1)
    expect(
      sample(text, 'placemat_http_request_duration_seconds_count', {method: 'GET', route: '/resource_providers/:uuid', status: '200'}),
    ).toBe(3)
    expect(text).not.toContain(RP1)
    expect(text).not.toContain('/no/such/thing')
    // the process's own metrics come along
    expect(text).toContain('process_cpu_user_seconds_total')
    expect(text).toContain('nodejs_heap_size_used_bytes')
    // the scrape answered once, with nothing to warn about
    expect(log.records().filter((r) => r.level >= 40)).toEqual([])
  })

  it('counts claims and 409 conflicts', async () => {
    api = await testApi()
    await provider(RP1, 'rp1', {VCPU: inv(8)})
    expect((await api.call('PUT', `/allocations/${C1}`, allocation(RP1, {VCPU: 2}, null))).status).toBe(204)
    // the same consumer again with a stale generation: a conflict, not a claim
    expect((await api.call('PUT', `/allocations/${C1}`, allocation(RP1, {VCPU: 2}, null))).status).toBe(409)
    // more than there is: a conflict too
    expect((await api.call('PUT', `/allocations/${C2}`, allocation(RP1, {VCPU: 100}, null))).status).toBe(409)
    const claim = await api.call('POST', '/placemat/v1/claims', {consumer_uuid: C2, ...allocation(RP1, {VCPU: 1}, null)})
    expect(claim.status).toBe(200)
    const text = await scrape()
    expect(sample(text, 'placemat_claims_total', {route: '/allocations/:consumer_uuid'})).toBe(1)
    expect(sample(text, 'placemat_claims_total', {route: '/placemat/v1/claims'})).toBe(1)
    expect(sample(text, 'placemat_conflicts_total', {method: 'PUT', route: '/allocations/:consumer_uuid'})).toBe(2)
    expect(sample(text, 'placemat_usage', {resource_class: 'VCPU'})).toBe(3)
    expect(sample(text, 'placemat_consumers')).toBe(2)
  })

  it('times write transactions, committed and rolled back', async () => {
    api = await testApi()
    await provider(RP1, 'rp1', {VCPU: inv(8)})
    expect((await api.call('PUT', `/allocations/${C1}`, allocation(RP1, {VCPU: 100}, null))).status).toBe(409)
    const text = await scrape()
    // POST /resource_providers and the inventory write committed; the refused allocation rolled back
    expect(sample(text, 'placemat_store_write_duration_seconds_count', {outcome: 'commit'})).toBe(2)
    expect(sample(text, 'placemat_store_write_duration_seconds_count', {outcome: 'rollback'})).toBe(1)
    expect(sample(text, 'placemat_store_write_duration_seconds_bucket', {outcome: 'commit', le: '+Inf'})).toBe(2)
    expect(sample(text, 'placemat_store_write_duration_seconds_sum', {outcome: 'commit'})).toBeGreaterThan(0)
  })

  it("stops timing a store's writes once its app is closed", async () => {
    api = await testApi()
    expect(api.store.onWrite).toBeTypeOf('function')
    await api.app.close()
    expect(api.store.onWrite).toBeNull()
  })

  it('reports capacity and usage per resource class, and per rack, row and room', async () => {
    api = await testApi()
    await provider(RP1, 'host1', {VCPU: inv(8, {reserved: 2, allocation_ratio: 4}), MEMORY_MB: inv(4096)})
    await provider(RP2, 'host2', {VCPU: inv(4)})
    expect((await api.call('PUT', `/allocations/${C1}`, allocation(RP1, {VCPU: 5, MEMORY_MB: 1024}, null))).status).toBe(204)
    let text = await scrape()
    // (8 - 2) * 4 + 4
    expect(sample(text, 'placemat_capacity', {resource_class: 'VCPU'})).toBe(28)
    expect(sample(text, 'placemat_capacity', {resource_class: 'MEMORY_MB'})).toBe(4096)
    expect(sample(text, 'placemat_usage', {resource_class: 'VCPU'})).toBe(5)
    expect(sample(text, 'placemat_usage', {resource_class: 'MEMORY_MB'})).toBe(1024)
    expect(sample(text, 'placemat_resource_providers')).toBe(2)
    expect(text).not.toContain('placemat_topology_capacity{')

    const layout = {
      rooms: [
        {
          name: 'hall',
          rows: [
            {
              name: 'r1',
              racks: [
                {name: 'k1', hosts: ['host1']},
                {name: 'k2', hosts: ['host2']},
              ],
            },
          ],
        },
      ],
    }
    expect((await api.call('PUT', '/placemat/v1/topology/layout', layout)).status).toBe(200)
    text = await scrape()
    expect(sample(text, 'placemat_topology_capacity', {level: 'rack', name: 'k1', resource_class: 'VCPU'})).toBe(24)
    expect(sample(text, 'placemat_topology_capacity', {level: 'rack', name: 'k2', resource_class: 'VCPU'})).toBe(4)
    expect(sample(text, 'placemat_topology_usage', {level: 'rack', name: 'k1', resource_class: 'VCPU'})).toBe(5)
    expect(sample(text, 'placemat_topology_usage', {level: 'rack', name: 'k2', resource_class: 'VCPU'})).toBeUndefined()
    expect(sample(text, 'placemat_topology_capacity', {level: 'row', name: 'r1', resource_class: 'VCPU'})).toBe(28)
    expect(sample(text, 'placemat_topology_usage', {level: 'room', name: 'hall', resource_class: 'MEMORY_MB'})).toBe(1024)

    // a released allocation and a deleted provider leave no stale series
    expect((await api.call('DELETE', `/allocations/${C1}`)).status).toBe(204)
    expect((await api.call('PUT', '/placemat/v1/topology/layout', {})).status).toBe(200)
    expect((await api.call('DELETE', `/resource_providers/${RP2}`)).status).toBe(204)
    text = await scrape()
    expect(sample(text, 'placemat_capacity', {resource_class: 'VCPU'})).toBe(24)
    expect(sample(text, 'placemat_usage', {resource_class: 'VCPU'})).toBeUndefined()
    expect(text).not.toContain('placemat_topology_capacity{')
  })
})

describe('GET /placemat/v1/health', () => {
  it('answers 200 without a token when the database answers', async () => {
    api = await testApi()
    const res = await api.app.inject({method: 'GET', url: '/placemat/v1/health', headers: {accept: 'text/plain'}})
    expect(res.statusCode).toBe(200)
    expect(JSON.parse(res.body)).toEqual({
      status: 'ok',
      database: 'ok',
      journal: {position: expect.any(Number), head: expect.any(Number), lag: 0},
      schema: Object.keys(migrations).sort().at(-1),
      release: RELEASE,
    })
  })

  it("answers 503 'Schema Not Served' once a newer release's contract moved the database past this one (seen at a beat), and the gauge says 0", async () => {
    api = await testApi()
    expect(sample(await scrape(), 'placemat_schema_served')).toBe(1)
    await sql`update placemat_meta set value = ${JSON.stringify({release: '0.3.0', migration: '0015_later'})} where key = 'min_release'`.execute(
      api.store.db,
    )
    // Not per request: the node's heartbeat judges the schema.
    expect((await api.app.inject({method: 'GET', url: '/placemat/v1/health'})).statusCode).toBe(200)
    await api.store.beat()
    const res = await api.app.inject({method: 'GET', url: '/placemat/v1/health', headers: {'openstack-api-version': 'placement latest'}})
    expect(res.statusCode).toBe(503)
    expect(JSON.parse(res.body).errors[0]).toMatchObject({
      status: 503,
      title: 'Schema Not Served',
      code: 'placemat.schema_not_served',
      detail: expect.stringContaining(
        `was contracted by placemat 0.3.0 (0015_later): it needs placemat 0.3.0 or later; this is placemat ${RELEASE}`,
      ),
    })
    expect(sample(await scrape(), 'placemat_schema_served')).toBe(0)
  })

  it("answers 503 in Placement's error format when the database does not", async () => {
    api = await testApi()
    await api.store.db.destroy()
    const res = await api.app.inject({method: 'GET', url: '/placemat/v1/health', headers: {'openstack-api-version': 'placement latest'}})
    expect(res.statusCode).toBe(503)
    const body = JSON.parse(res.body)
    expect(body.errors).toHaveLength(1)
    expect(body.errors[0]).toMatchObject({status: 503, title: 'Database Unavailable', request_id: res.headers['x-openstack-request-id']})
    expect(body.errors[0].detail).toContain('database unavailable: ')
    expect(res.headers['retry-after']).toBe('2')
  })

  it('gives the database a bounded time to answer', async () => {
    api = await testApi()
    // SQLite's one connection busy elsewhere: select 1 waits for it
    const busy = api.store.db.connection().execute(() => new Promise((r) => setTimeout(r, 300)))
    await expect(api.store.ping(50)).rejects.toMatchObject({fault: 'timeout', status: 503})
    await busy
    await expect(api.store.ping(50)).resolves.toBeUndefined()
  })
})
