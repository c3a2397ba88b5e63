/**
 * The backends on a database server, PostgreSQL's and MariaDB's, through the API and the CLI: the
 * same answers as on SQLite (before and after a reload), two daemons on one database, the CLI on
 * its URL. (The store's own guarantees are tested on each backend in store*.test.ts.) Each
 * server's cases need its binaries (PostgreSQL's or PLACEMAT_TEST_PG_URL, mariadb-server's);
 * skipped, and said so, without them.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {buildApp} from '../../src/http/app.js'
import {startServer} from '../../src/daemon/server.js'
import {Store} from '../../src/store/store.js'
import {placemat} from '../helpers/cli.js'
import {mariadbAvailable, startMariadb} from '../helpers/mariadb.js'
import {postgresAvailable, startPostgres} from '../helpers/postgres.js'
import {LATEST_MIGRATION, migrations} from '../../src/store/schema.js'
import {RELEASE} from '../../src/store/release.js'

if (!postgresAvailable) console.warn('shared-database: skipped on PostgreSQL: no server binaries here (apt-get install postgresql)')
if (!mariadbAvailable) console.warn('shared-database: skipped on MariaDB: no server binaries here (apt-get install mariadb-server)')

/** A database server of one kind: a new, empty database's URL (placemat's), and stopping it. */
interface Server {
  database(): Promise<string>
  stop(): Promise<void>
}

/**
 * `keyOrder`: a store loaded again has a provider's inventories and aggregates in the primary key's
 * order (InnoDB keeps rows in it), not in the order they were written: Placement promises neither
 * (an object's keys, a set).
 */
const servers: Array<{kind: string; scheme: string; available: boolean; keyOrder?: boolean; start: () => Promise<Server>}> = [
  {kind: 'PostgreSQL', scheme: 'postgres://', available: postgresAvailable, start: startPostgres},
  {
    kind: 'MariaDB',
    scheme: 'mysql://',
    available: mariadbAvailable,
    keyOrder: true,
    start: async () => {
      const server = await startMariadb()
      return {database: () => server.placematDatabase(), stop: () => server.stop()}
    },
  },
]

const U = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
const AGG = 'aaaaaaaa-0000-4000-8000-000000000001'

/** Placement calls and what to compare of each answer. */
const SCRIPT: Array<[string, string, unknown?]> = [
  ['POST', '/resource_providers', {name: 'cn1', uuid: U(1)}],
  ['POST', '/resource_providers', {name: 'cn1-numa0', uuid: U(2), parent_provider_uuid: U(1)}],
  ['POST', '/resource_providers', {name: 'cn2', uuid: U(3)}],
  ['POST', '/resource_providers', {name: 'ss', uuid: U(4)}],
  ['PUT', `/resource_providers/${U(1)}/inventories`, {resource_provider_generation: 0, inventories: {DISK_GB: {total: 100, reserved: 10}}}],
  [
    'PUT',
    `/resource_providers/${U(2)}/inventories`,
    {resource_provider_generation: 0, inventories: {VCPU: {total: 8, allocation_ratio: 1.5}, MEMORY_MB: {total: 4096, step_size: 256}}},
  ],
  [
    'PUT',
    `/resource_providers/${U(3)}/inventories`,
    {resource_provider_generation: 0, inventories: {VCPU: {total: 4}, MEMORY_MB: {total: 2048}, DISK_GB: {total: 50}}},
  ],
  ['PUT', `/resource_providers/${U(4)}/inventories`, {resource_provider_generation: 0, inventories: {DISK_GB: {total: 1000}}}],
  ['PUT', `/resource_providers/${U(4)}/traits`, {resource_provider_generation: 1, traits: ['MISC_SHARES_VIA_AGGREGATE']}],
  ['PUT', `/resource_providers/${U(2)}/traits`, {resource_provider_generation: 1, traits: ['HW_CPU_X86_AVX2', 'HW_NUMA_ROOT']}],
  ['PUT', `/resource_providers/${U(1)}/aggregates`, {resource_provider_generation: 1, aggregates: [AGG]}],
  ['PUT', `/resource_providers/${U(4)}/aggregates`, {resource_provider_generation: 2, aggregates: [AGG]}],
  ['GET', '/allocation_candidates?resources=VCPU:1,MEMORY_MB:512,DISK_GB:20'],
  [
    'PUT',
    `/allocations/${U(100)}`,
    {
      allocations: {[U(2)]: {resources: {VCPU: 2, MEMORY_MB: 512}}, [U(4)]: {resources: {DISK_GB: 20}}},
      project_id: 'p',
      user_id: 'u',
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    },
  ],
  [
    'POST',
    '/allocations',
    {
      [U(101)]: {
        allocations: {[U(3)]: {resources: {VCPU: 1}}},
        project_id: 'p',
        user_id: 'u',
        consumer_generation: null,
        consumer_type: 'INSTANCE',
      },
      [U(102)]: {
        allocations: {[U(3)]: {resources: {VCPU: 2}}},
        project_id: 'p',
        user_id: 'u',
        consumer_generation: null,
        consumer_type: 'INSTANCE',
      },
    },
  ],
  // Placement groups: both consumers on cn2 break "at most 1 per host" (409), unless allowed.
  ['POST', '/placemat/v1/groups', {name: 'pair', policy: 'max-per', level: 'host', max_per: 1, soft: false}],
  ['POST', '/placemat/v1/groups/pair/members', {add: [U(101), U(102)]}],
  ['POST', '/placemat/v1/groups/pair/members?allow_violations=true', {add: [U(101), U(102)]}],
  ['GET', '/placemat/v1/groups/pair'],
  [
    'PUT',
    `/allocations/${U(103)}`,
    {allocations: {[U(3)]: {resources: {VCPU: 2}}}, project_id: 'p', user_id: 'u', consumer_generation: null, consumer_type: 'INSTANCE'},
  ], // over capacity: 409
  ['PUT', `/resource_providers/${U(3)}/inventories`, {resource_provider_generation: 1, inventories: {MEMORY_MB: {total: 2048}}}], // VCPU in use: 409
  ['GET', `/allocations/${U(100)}`],
  ['GET', '/usages?project_id=p'],
  ['GET', `/resource_providers/${U(2)}/usages`],
  ['GET', '/resource_providers?resources=VCPU:1'],
  ['DELETE', `/allocations/${U(100)}`],
  ['DELETE', `/allocations/${U(101)}`],
  ['DELETE', `/allocations/${U(102)}`],
  ['DELETE', `/resource_providers/${U(3)}`],
  ['GET', '/resource_providers'],
  ['GET', '/allocation_candidates?resources=VCPU:1,DISK_GB:20&limit=2'],
  // Hostile strings get the same 400 on both backends (PostgreSQL cannot store NUL or lone surrogates).
  ['POST', '/resource_providers', {name: 'nul\u0000', uuid: U(5)}],
  ['POST', '/resource_providers', {name: 'lone\ud800', uuid: U(5)}],
  [
    'PUT',
    `/allocations/${U(104)}`,
    {
      allocations: {[U(2)]: {resources: {VCPU: 1}}},
      project_id: 'p\u0000',
      user_id: 'u',
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    },
  ],
  // Text that COPY escapes (tab, newline, backslash) or sends as several bytes, read back whole.
  ['POST', '/resource_providers', {name: 'tab\tnewline\nback\\slash ñandú 🚀', uuid: U(6)}],
  ['PUT', `/resource_providers/${U(6)}/inventories`, {resource_provider_generation: 0, inventories: {VCPU: {total: 2}}}],
  [
    'PUT',
    `/allocations/${U(105)}`,
    {
      allocations: {[U(6)]: {resources: {VCPU: 1}}},
      project_id: 'projet-ñandú-\\x41-🚀',
      user_id: 'u\tv',
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    },
  ],
  ['GET', `/usages?project_id=${encodeURIComponent('projet-ñandú-\\x41-🚀')}`],
  ['GET', '/resource_providers?name=' + encodeURIComponent('tab\tnewline\nback\\slash ñandú 🚀')],
  // Any uuid form Placement accepts fits the column: stored canonical.
  [
    'PUT',
    `/resource_providers/${U(4)}/aggregates`,
    {resource_provider_generation: 4, aggregates: [`urn:uuid:${AGG}`, `{${U(99).toUpperCase()}}`]},
  ],
  ['GET', `/resource_providers/${U(4)}/aggregates`],
  ['GET', '/placemat/v1/groups'],
]
const CHECK_AFTER_RELOAD = SCRIPT.filter(([m, url]) => m === 'GET' && !url.startsWith('/allocations/'))

/** Answers as the same whatever order an object's keys or a provider's aggregates come in. */
const unordered = (list: Awaited<ReturnType<typeof answers>>) =>
  list.map(({body, ...r}) => ({...r, body: JSON.parse(body, (k, v) => (k === 'aggregates' && Array.isArray(v) ? v.sort() : v))}))

async function answers(store: Store, calls: typeof SCRIPT) {
  const app = await buildApp({store, auth: 'noauth2'})
  const out = []
  for (const [method, url, body] of calls) {
    const res = await app.inject({
      method: method as 'GET',
      url,
      headers: {'x-auth-token': 'admin', 'openstack-api-version': 'placement latest', 'content-type': 'application/json'},
      payload: body === undefined ? undefined : JSON.stringify(body),
    })
    // Request ids differ from call to call.
    // Request ids differ from call to call, and a group's times from store to store.
    const text = res.body.replace(/req-[0-9a-f-]{36}/g, 'req-x').replace(/"(created|updated)_at":"[^"]*"/g, '"$1_at":"t"')
    out.push({call: `${method} ${url}`, status: res.statusCode, body: text})
  }
  await app.close()
  return out
}

for (const s of servers) describe.skipIf(!s.available)(`the ${s.kind} backend`, () => backendCases(s))

function backendCases({scheme, keyOrder, start}: (typeof servers)[number]) {
  let server: Server
  beforeAll(async () => {
    server = await start()
  }, 60000)
  afterAll(() => server?.stop())

  it('answers as SQLite does, before and after a reload', async () => {
    const url = await server.database()
    const [lite, shared] = [await Store.open(':memory:'), await Store.open(url)]
    const a = await answers(lite, SCRIPT)
    const b = await answers(shared, SCRIPT)
    expect(b).toEqual(a)
    expect(a.filter((r) => r.status >= 400).map((r) => `${r.status} ${r.call}`)).toEqual([
      '409 POST /placemat/v1/groups/pair/members',
      `409 PUT /allocations/${U(103)}`,
      `409 PUT /resource_providers/${U(3)}/inventories`,
      '400 POST /resource_providers',
      '400 POST /resource_providers',
      `400 PUT /allocations/${U(104)}`,
    ])
    expect(JSON.parse(a.at(-2)!.body).aggregates).toEqual([AGG, U(99)])
    expect(JSON.parse(a.at(-1)!.body).groups).toMatchObject([{name: 'pair', members: [U(101), U(102)], violations: []}])
    await shared.close()
    // A new process loads the same state: same answers, providers in creation order.
    const again = await Store.open(url)
    const [reloaded, want] = [await answers(again, CHECK_AFTER_RELOAD), await answers(lite, CHECK_AFTER_RELOAD)]
    if (keyOrder) expect(unordered(reloaded)).toEqual(unordered(want))
    else expect(reloaded).toEqual(want)
    expect([...again.state.providers.values()].map((p) => p.name)).toEqual(['cn1', 'cn1-numa0', 'ss', 'tab\tnewline\nback\\slash ñandú 🚀'])
    await again.close()
    await lite.close()
  })

  it('runs the daemon on it, beside a second daemon on the same database', async () => {
    const url = await server.database()
    const [one, two] = [
      await startServer({db: url, host: '127.0.0.1', port: 0, auth: 'noauth2'}),
      await startServer({db: url, host: '127.0.0.1', port: 0, auth: 'noauth2'}),
    ]
    const headers = {'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39', 'content-type': 'application/json'}
    const made = await fetch(`${one.url}/resource_providers`, {method: 'POST', headers, body: JSON.stringify({name: 'cn1', uuid: U(9)})})
    expect(made.status).toBe(200)
    const inv = await fetch(`${two.url}/resource_providers/${U(9)}/inventories`, {
      method: 'PUT',
      headers,
      body: JSON.stringify({resource_provider_generation: 0, inventories: {VCPU: {total: 2}}}),
    })
    expect(inv.status).toBe(200)
    const ac = await (await fetch(`${one.url}/allocation_candidates?resources=VCPU:2`, {headers})).json()
    expect(Object.keys(ac.provider_summaries)).toEqual([U(9)])
    await one.close()
    await two.close()
  })

  it(`serves the CLI on a ${scheme} URL, and db upgrade creates the schema`, async () => {
    const url = await server.database()
    const up = await placemat(['db', 'upgrade', '--db', url, '--json'])
    expect(up.code, up.stderr).toBe(0)
    expect(JSON.parse(up.stdout).applied).toEqual(Object.keys(migrations).sort())
    expect((await placemat(['provider', 'create', 'cn1', '--db', url])).code).toBe(0)
    const list = await placemat(['provider', 'list', '--db', url, '--json'])
    expect(list.code, list.stderr).toBe(0)
    expect(JSON.parse(list.stdout).resource_providers.map((p: {name: string}) => p.name)).toEqual(['cn1'])
    const status = await placemat(['db', 'status', '--db', url, '--json'])
    expect(status.code, status.stderr).toBe(0)
    expect(JSON.parse(status.stdout)).toMatchObject({state: 'current', schema_version: LATEST_MIGRATION, counts: {resource_providers: 1}})
    expect(url).toContain(JSON.parse(status.stdout).file.split('/').at(-1))
    const check = await placemat(['db', 'check', '--db', url, '--json'])
    expect(check.code, check.stderr + check.stdout).toBe(0)
    expect(JSON.parse(check.stdout).checks.map((r: {name: string}) => r.name)).not.toContain('SQLite integrity')
  }, 60000)

  it('db status on a database URL lists the nodes serving it, and looks for no local daemon', async () => {
    const url = await server.database()
    const nodes = [
      await startServer({db: url, host: '127.0.0.1', port: 0, auth: 'noauth2'}),
      await startServer({db: url, host: '127.0.0.1', port: 0, auth: 'noauth2'}),
    ]
    try {
      const status = await placemat(['db', 'status', '--db', url])
      expect(status.code, status.stderr).toBe(0)
      const lines = status.stdout.split('\n')
      expect(lines.filter((l) => /^daemon\b/.test(l))).toEqual([])
      expect(lines).toContain(`nodes         2 of placemat ${RELEASE}`)
      for (const n of nodes) expect(lines.filter((l) => l.includes(`, ${n.url}, serving since`))).toHaveLength(1)
      const json = JSON.parse((await placemat(['db', 'status', '--db', url, '--json'])).stdout)
      expect(json).not.toHaveProperty('daemon')
      expect(json.nodes.registered.map((n: {url: string}) => n.url).sort()).toEqual(nodes.map((n) => n.url).sort())
    } finally {
      for (const n of nodes) await n.close()
    }
  }, 60000)
}
