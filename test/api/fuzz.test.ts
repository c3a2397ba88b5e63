/**
 * Hostile input on every route: malformed and adversarial bodies, headers and query strings,
 * from a seeded generator (the same requests on every run). Whatever is sent, the daemon
 * answers below 500, in time, in Placement's error format, and a refused request leaves the
 * State and the database exactly as they were.
 */
import {depth} from '../helpers/depth.js'
import {randomUUID} from 'node:crypto'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {EXTENSION_ROUTES, PLACEMENT_ROUTES} from '../../src/http/app.js'
import type {RouteDef} from '../../src/http/context.js'
import {testApi, type TestApi} from '../helpers/http-helpers.js'

const SEED = 20261122
const REQUESTS = depth(4000, 1000)
/** Far above any honest answer here; a hang or a quadratic path blows through it. */
const PER_REQUEST_LIMIT_MS = 15_000

/** mulberry32: small, seeded, good enough to pick cases. */
function rng(seed: number) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]
  return {next, int, pick, chance: (p: number) => next() < p}
}
type Rng = ReturnType<typeof rng>

const ROOT = '11111111-1111-4111-8111-111111111111'
const CHILD = '22222222-2222-4222-8222-222222222222'
const CONSUMER = '33333333-3333-4333-8333-333333333333'
const AGG = '44444444-4444-4444-8444-444444444444'

/** Strings that have broken parsers, validators, databases or headers somewhere. */
const NASTY_STRINGS = [
  '',
  ' ',
  '\n',
  'CUSTOM_A\n',
  'CUSTOM_\u0000',
  '\u0000',
  '\ud800',
  'a\udfffb',
  '😀',
  '\u202e',
  '%ff',
  '%00',
  '..',
  '/',
  '\\',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'x'.repeat(300),
  'X'.repeat(70_000),
  'CUSTOM_' + 'A'.repeat(300),
  'urn:uuid:' + ROOT,
  `{${ROOT}}`,
  ROOT.toUpperCase(),
  ROOT.replace(/-/g, ''),
  'in:' + AGG,
  '!in:' + AGG,
  "'; drop table resource_providers; --",
  '<script>',
  '<'.repeat(5000),
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a hostile input, on purpose
  '${x}',
  '%s%s%s',
  'VCPU',
  'VCPU:1',
  'VCPU:-1',
  'VCPU:1e9',
  'HW_CPU_X86_AVX2',
  '!HW_CPU_X86_AVX2',
  'in:HW_CPU_X86_AVX2,HW_CPU_X86_SSE',
  'latest',
  '1.39',
  '1.99',
  '-1',
  '0',
  '1.5',
  'NaN',
]
const NASTY_VALUES: unknown[] = [
  null,
  true,
  false,
  0,
  -0,
  -1,
  1.5,
  1e308,
  -1e308,
  2 ** 53 + 1,
  2 ** 31,
  -(2 ** 31) - 1,
  [],
  {},
  [null],
  [[[]]],
  {'': 1},
  {__proto__: 1},
  JSON.parse('{"__proto__": {"admin": true}}'),
  {constructor: {prototype: {}}},
  Array(3000).fill(ROOT),
  Array(2000).fill({}),
  ...NASTY_STRINGS,
]

/** A valid body per route, to mutate: shapes near the real ones reach deeper code. */
function validBody(def: RouteDef): unknown {
  const inv = {resource_provider_generation: 1, inventories: {VCPU: {total: 8}, MEMORY_MB: {total: 1024, reserved: 0}}}
  const alloc = {
    allocations: {[ROOT]: {resources: {VCPU: 1}}},
    project_id: 'p',
    user_id: 'u',
    consumer_generation: 1,
    consumer_type: 'INSTANCE',
  }
  switch (`${def.method} ${def.url}`) {
    case 'POST /resource_providers':
      return {name: 'new', uuid: randomUUID(), parent_provider_uuid: ROOT}
    case 'PUT /resource_providers/:uuid':
      return {name: 'renamed', parent_provider_uuid: null}
    case 'PUT /resource_providers/:uuid/inventories':
      return inv
    case 'POST /resource_providers/:uuid/inventories':
      return {resource_class: 'DISK_GB', total: 10, resource_provider_generation: 1}
    case 'PUT /resource_providers/:uuid/inventories/:resource_class':
      return {total: 16, resource_provider_generation: 1}
    case 'PUT /resource_providers/:uuid/traits':
      return {traits: ['HW_CPU_X86_AVX2'], resource_provider_generation: 1}
    case 'PUT /resource_providers/:uuid/aggregates':
      return {aggregates: [AGG], resource_provider_generation: 1}
    case 'POST /resource_classes':
      return {name: 'CUSTOM_FUZZ'}
    case 'PUT /allocations/:consumer_uuid':
      return alloc
    case 'POST /allocations':
      return {[CONSUMER]: alloc}
    case 'POST /reshaper':
      return {inventories: {[ROOT]: inv}, allocations: {[CONSUMER]: alloc}}
    case 'POST /placemat/v1/batch':
      return {
        operations: [
          {op: 'ensure_trait', name: 'CUSTOM_FUZZ'},
          {op: 'set_traits', uuid: ROOT, traits: ['CUSTOM_FUZZ']},
        ],
      }
    case 'POST /placemat/v1/claims':
      return {
        consumer_uuid: randomUUID(),
        project_id: 'p',
        user_id: 'u',
        consumer_generation: null,
        allocations: {[ROOT]: {resources: {VCPU: 1}}},
        affinity: [{relation: 'same', level: 'rack', consumer: CONSUMER}],
      }
    case 'PUT /placemat/v1/topology/layout':
      return {racks: [{name: 'r1', hosts: ['cn1']}]}
    default:
      return {}
  }
}

/** A body: broken JSON, a nasty value, or a valid body with one part replaced, removed or poisoned. */
function body(r: Rng, def: RouteDef): string {
  const kind = r.int(10)
  if (kind === 0) return r.pick(['', '{', '{"a":', '[1,]', 'nul', '\u0000', '{"a":1}{', '\ufeff{}', '{"a":"\\ud800"}', '{"a":"\\u0000"}'])
  if (kind === 1) return '['.repeat(r.pick([70, 3000, 50_000])) + ']'.repeat(r.pick([0, 70, 3000, 50_000]))
  if (kind === 2) return JSON.stringify(r.pick(NASTY_VALUES))
  if (kind === 3) return JSON.stringify({name: 'x'.repeat(r.pick([1000, 2_000_000])), uuid: 'y'.repeat(r.pick([10, 200_000]))})
  const doc = structuredClone(validBody(def)) as Record<string, unknown>
  mutate(r, doc, 0)
  return JSON.stringify(doc)
}

function mutate(r: Rng, doc: unknown, depth: number): void {
  if (typeof doc !== 'object' || doc === null) return
  const keys = Object.keys(doc)
  const record = doc as Record<string, unknown>
  if (!keys.length || r.chance(0.3)) {
    const key = r.pick([...NASTY_STRINGS.slice(0, 24), 'extra', 'generation'])
    Object.defineProperty(record, key, {value: r.pick(NASTY_VALUES), enumerable: true, writable: true, configurable: true})
    return
  }
  const key = r.pick(keys)
  if (depth < 4 && typeof record[key] === 'object' && r.chance(0.6)) return mutate(r, record[key], depth + 1)
  if (r.chance(0.2)) delete record[key]
  else record[key] = r.pick(NASTY_VALUES)
}

function pathParam(r: Rng, name: string): string {
  const good: Record<string, string[]> = {
    uuid: [ROOT, CHILD, randomUUID()],
    consumer_uuid: [CONSUMER, randomUUID()],
    name: ['CUSTOM_FUZZ', 'HW_CPU_X86_AVX2', 'VCPU', 'CUSTOM_MAGIC'],
    resource_class: ['VCPU', 'MEMORY_MB', 'CUSTOM_MAGIC'],
  }
  if (r.chance(0.5)) return r.pick(good[name] ?? ['x'])
  const raw = r.pick(NASTY_STRINGS)
  return r.chance(0.3) ? raw.replace(/[\u0000-\u001f]/g, '') : enc(raw.slice(0, 4000)).replace(/%2525/g, '%25')
}

/** encodeURIComponent, but a lone surrogate becomes the bytes of one (invalid UTF-8) instead of a throw. */
const enc = (s: string) => encodeURIComponent(s.replace(/[\uD800-\uDFFF]/gu, 'LONESURROGATE')).replace(/LONESURROGATE/g, '%ED%A0%80')

const QUERY_KEYS = [
  'name',
  'uuid',
  'member_of',
  'in_tree',
  'resources',
  'required',
  'limit',
  'group_policy',
  'same_subtree',
  'root_required',
  'resources1',
  'required_NET',
  'member_of2',
  'project_id',
  'user_id',
  'consumer_type',
  'associated',
  'near',
  'far',
  'dry_run',
  '__proto__',
  'constructor',
  'toString',
  '',
]

function query(r: Rng): string {
  const n = r.int(4)
  const parts: string[] = []
  for (let i = 0; i < n; i++) {
    const key = r.pick(QUERY_KEYS)
    const value = r.chance(0.3)
      ? r.pick(['VCPU:1', 'VCPU:1,MEMORY_MB:64', 'HW_CPU_X86_AVX2', `in:${AGG}`, ROOT, '1', 'isolate'])
      : r.pick(NASTY_STRINGS)
    parts.push(`${encodeURIComponent(key)}=${r.chance(0.1) ? value.replace(/[^A-Za-z0-9]/g, '') : enc(value.slice(0, 3000))}`)
  }
  if (r.chance(0.05)) parts.push('%zz=%', 'a=%e0%a4%a', '&&&')
  return parts.length ? '?' + parts.join('&') : ''
}

function headers(r: Rng, hasBody: boolean): Record<string, string> {
  const h: Record<string, string> = {}
  if (!r.chance(0.05)) h['x-auth-token'] = r.chance(0.9) ? 'admin' : r.pick(['', 'user', 'admin:x', ' admin'])
  // With new defaults enforced POST /reshaper is the service role's: the admin has it too, so
  // hostile bodies still reach every route.
  if (h['x-auth-token'] === 'admin') h['x-roles'] = 'admin,service'
  const versions = [
    'placement latest',
    'placement 1.0',
    'placement 1.14',
    'placement 1.28',
    'placement 1.36',
    'placement 1.39',
    'placement 1.40',
    'placement 2.0',
    'placement x',
    'compute 2.1',
    '',
  ]
  if (!r.chance(0.1)) h['openstack-api-version'] = r.chance(0.6) ? 'placement latest' : r.pick(versions)
  if (hasBody || r.chance(0.1)) {
    h['content-type'] = r.chance(0.85)
      ? 'application/json'
      : r.pick(['text/plain', 'application/json; charset=latin-1', 'application/jsonx', '', 'multipart/form-data; boundary=x'])
  }
  if (r.chance(0.1)) h.accept = r.pick(['text/html', 'application/xml', '*/*;q=0', 'application/json;q=0.5, text/html', ''])
  if (r.chance(0.03)) h.origin = 'http://evil.example'
  return h
}

/** Everything a client can observe plus everything the database holds. */
async function digest(api: TestApi): Promise<string> {
  const s = api.store.state
  const memory = JSON.stringify({
    providers: [...s.providers.values()].map((p) => [
      p.uuid,
      p.name,
      p.generation,
      p.parent,
      [...p.inventories],
      [...p.traits],
      [...p.aggregates],
      [...p.usages],
    ]),
    consumers: [...s.consumers.values()].map((c) => [
      c.uuid,
      c.project,
      c.user,
      c.type,
      c.generation,
      [...c.allocations].map(([k, v]) => [k, [...v]]),
    ]),
    topology: [...s.topology.values()].map((n) => [n.name, n.level, n.parent]),
    topologyGeneration: s.topologyGeneration,
  })
  const tables = [
    'resource_providers',
    'inventories',
    'provider_traits',
    'provider_aggregates',
    'consumers',
    'allocations',
    'resource_classes',
    'traits',
    'topology_nodes',
  ] as const
  const rows: unknown[] = []
  for (const t of tables)
    rows.push(
      await api.store.db
        .selectFrom(t as any)
        .selectAll()
        .execute(),
    )
  return memory + JSON.stringify(rows, (_k, v) => (typeof v === 'bigint' ? Number(v) : v))
}

let api: TestApi
beforeAll(async () => {
  api = await testApi()
  const call = async (method: string, url: string, b?: unknown) => {
    const res = await api.call(method, url, b)
    if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(res.body)}`)
  }
  await call('POST', '/resource_providers', {name: 'cn1', uuid: ROOT})
  await call('POST', '/resource_providers', {name: 'cn1-nic', uuid: CHILD, parent_provider_uuid: ROOT})
  await call('PUT', `/resource_providers/${ROOT}/inventories`, {
    resource_provider_generation: 0,
    inventories: {VCPU: {total: 8}, MEMORY_MB: {total: 4096}},
  })
  await call('PUT', '/resource_classes/CUSTOM_MAGIC')
  await call('PUT', `/resource_providers/${CHILD}/inventories`, {resource_provider_generation: 0, inventories: {CUSTOM_MAGIC: {total: 4}}})
  await call('PUT', `/resource_providers/${ROOT}/aggregates`, {resource_provider_generation: 1, aggregates: [AGG]})
  await call('PUT', `/allocations/${CONSUMER}`, {
    allocations: {[ROOT]: {resources: {VCPU: 2}}},
    project_id: 'p',
    user_id: 'u',
    consumer_generation: null,
    consumer_type: 'INSTANCE',
  })
  await call('PUT', '/placemat/v1/topology/layout', {racks: [{name: 'r1', hosts: ['cn1']}]})
})
afterAll(() => api.close())

describe('fuzz: every route, hostile input', () => {
  it(`${REQUESTS} seeded requests: no 5xx, no hang, Placement's error format, nothing changed by a refusal`, async () => {
    const r = rng(SEED)
    const routes = [
      ...PLACEMENT_ROUTES,
      ...EXTENSION_ROUTES,
      {method: 'GET', url: '/metrics'} as RouteDef,
      {method: 'GET', url: '/placemat/v1/health'} as RouteDef,
    ]
    const methods = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'PURGE']
    let before = await digest(api)
    const statuses = new Map<number, number>()
    const started = Date.now()
    for (let i = 0; i < REQUESTS; i++) {
      const def = r.pick(routes)
      const method = r.chance(0.85) ? def.method : r.pick(methods)
      const url = def.url.replace(/:(\w+)/g, (_m, name: string) => pathParam(r, name)) + query(r)
      const sendBody = def.body ? r.chance(0.95) : r.chance(0.1)
      const payload = sendBody ? body(r, def) : undefined
      const label = `#${i} ${method} ${url.slice(0, 200)} body=${payload?.slice(0, 200)}`
      const res = await Promise.race([
        api.app.inject({method: method as any, url, headers: headers(r, sendBody), payload}),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer in time: ${label}`)), PER_REQUEST_LIMIT_MS)),
      ])
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
      expect(res.statusCode, `${label}\n=> ${res.body.slice(0, 500)}`).toBeLessThan(500)
      if (res.statusCode >= 400 && method !== 'HEAD') {
        if (res.headers['content-type'] === 'application/json') {
          const parsed = JSON.parse(res.body)
          expect(parsed.errors?.[0], label).toMatchObject({status: res.statusCode, title: expect.any(String), detail: expect.any(String)})
          expect(res.body.length, label).toBeLessThan(64 * 1024)
        } else {
          expect(res.headers['content-type'], label).toMatch(/^text\/html/)
        }
        const after = await digest(api)
        expect(after === before, `a refused request changed the state: ${label}`).toBe(true)
      } else before = await digest(api)
    }
    const wallMs = Date.now() - started
    console.log(
      `fuzz: ${REQUESTS} requests in ${wallMs} ms; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`,
    )
  }, 600_000)
})
