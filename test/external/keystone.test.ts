/**
 * The daemon behind a real Keystone (Debian's python3-keystone; skipped, saying so, where it
 * is not installed): started with a placement.conf as OpenStack Placement's own
 * (auth_strategy = keystone, [keystone_authtoken] with the daemon's service user), it takes
 * users, projects, roles and system scope from validated tokens, refuses missing, unknown and
 * revoked tokens with 401 and Keystone's WWW-Authenticate, applies Placement's policy, and
 * serves osc-placement (`openstack resource provider ...`) through Keystone's catalog.
 */
import {execFile, spawn, type ChildProcess} from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import readline from 'node:readline'
import {promisify} from 'node:util'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {BIN, placemat} from '../helpers/cli.js'
import {ADMIN_PASSWORD, keystoneAvailable, startKeystone, type Keystone} from '../helpers/keystone.js'

const run = promisify(execFile)
if (!keystoneAvailable)
  console.warn('keystone.test.ts: no Keystone here (apt-get install python3-keystone uwsgi-core uwsgi-plugin-python3): skipped')

describe.skipIf(!keystoneAvailable)('the daemon behind Keystone', () => {
  let ks: Keystone
  let daemon: ChildProcess
  let url: string
  const H = {'openstack-api-version': 'placement latest', 'content-type': 'application/json'}
  const call = (method: string, p: string, token?: string, body?: unknown) =>
    fetch(`${url}${p}`, {
      method,
      headers: {...H, ...(token ? {'x-auth-token': token} : {})},
      body: body === undefined ? undefined : JSON.stringify(body),
    })

  beforeAll(async () => {
    ks = await startKeystone()
    await ks.project('service')
    await ks.user('placement', 'placement-secret', {project: 'service', projectRoles: ['admin']})
    // A current nova's user: the `service` role alone, in the service project.
    await ks.user('nova', 'nova-secret', {project: 'service', projectRoles: ['service']})
    await ks.user('alice', 'alice-secret', {project: 'demo', projectRoles: ['member', 'reader']})
    await ks.user('rita', 'rita-secret', {project: 'demo', projectRoles: ['reader'], systemRoles: ['reader']})
    const conf = path.join(ks.dir, 'placement.conf')
    fs.writeFileSync(
      conf,
      [
        '[api]',
        'auth_strategy = keystone',
        '[keystone_authtoken]',
        `www_authenticate_uri = ${ks.url}`,
        `auth_url = ${ks.url}`,
        'auth_type = password',
        'project_domain_name = Default',
        'user_domain_name = Default',
        'project_name = service',
        'username = placement',
        'password = placement-secret',
        'token_cache_time = 1',
        'memcached_servers = localhost:11211',
        '[placement_database]',
        'connection = mysql+pymysql://placement:secret@controller/placement',
        '',
      ].join('\n'),
    )
    daemon = spawn(
      process.execPath,
      [BIN, 'daemon', 'start', '--foreground', '--db', path.join(ks.dir, 'placemat.db'), '--port', '0', '--config-file', conf],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    const warnings: string[] = []
    readline.createInterface({input: daemon.stderr!}).on('line', (l) => warnings.push(l))
    url = await new Promise<string>((resolve, reject) => {
      readline.createInterface({input: daemon.stdout!}).on('line', (l) => {
        const m = /listening on (http:\/\/\S+)/.exec(l)
        if (m) resolve(m[1])
      })
      daemon.once('exit', (code) => reject(new Error(`daemon exited ${code}: ${warnings.join('\n')}`)))
    })
    const svc = await ks.admin('POST', '/services', {service: {type: 'placement', name: 'placement'}})
    await ks.admin('POST', '/endpoints', {endpoint: {service_id: svc.service.id, interface: 'public', url, region_id: 'RegionOne'}})
    // What placement.conf says that placemat does not read is said, not silently misread.
    expect(warnings.join('\n')).toContain('[keystone_authtoken] memcached_servers ignored')
    // Its MySQL database is not the one served (--db is), and its password is not repeated.
    expect(warnings.join('\n')).toContain(
      '[placement_database] connection (mysql+pymysql://placement:***@controller/placement) not used: --db names the database',
    )
    expect(warnings.join('\n')).not.toContain('secret@')
  }, 180_000)

  afterAll(async () => {
    daemon?.kill('SIGTERM')
    await ks?.stop()
  })

  it('refuses a missing, unknown or revoked token with 401 and where to authenticate', async () => {
    for (const token of [undefined, 'not-a-token']) {
      const res = await call('GET', '/resource_providers', token)
      expect(res.status).toBe(401)
      expect(res.headers.get('www-authenticate')).toBe(`Keystone uri="${ks.url}"`)
    }
    const revoked = await ks.token('alice', 'alice-secret', {project: 'demo'})
    await ks.revoke(revoked)
    expect((await call('GET', '/usages?project_id=x', revoked)).status).toBe(401)
    // A token validated once is trusted for token_cache_time (1 s here), then asked about again.
    const later = await ks.token('admin', ADMIN_PASSWORD, {project: 'admin'})
    expect((await call('GET', '/resource_providers', later)).status).toBe(200)
    await ks.revoke(later)
    await new Promise((r) => setTimeout(r, 1500))
    expect((await call('GET', '/resource_providers', later)).status).toBe(401)
  })

  it("applies Placement's default policy (15.0.0's, new defaults and scope enforced) to the token's roles, project and scope", async () => {
    const admin = await ks.token('admin', ADMIN_PASSWORD, {project: 'admin'})
    const member = await ks.token('alice', 'alice-secret', {project: 'demo'})
    const projectReader = await ks.token('rita', 'rita-secret', {project: 'demo'})
    const systemReader = await ks.token('rita', 'rita-secret', 'system')
    const demo = await ks.project('demo')
    expect((await call('POST', '/resource_providers', admin, {name: 'cn1'})).status).toBe(200)
    expect((await call('GET', '/resource_providers', member)).status).toBe(403)
    expect((await call('POST', '/resource_providers', member, {name: 'cn-member'})).status).toBe(403)
    expect((await call('GET', '/resource_providers', projectReader)).status).toBe(403)
    expect((await call('GET', `/usages?project_id=${demo}`, projectReader)).status).toBe(200)
    expect((await call('GET', '/usages?project_id=someone-else', projectReader)).status).toBe(403)
    // System readers were Placement 8.0.0's readers; since 9.0.0 only admins and services read.
    expect((await call('GET', '/resource_providers', systemReader)).status).toBe(403)
    const listed = await call('GET', '/resource_providers', admin)
    expect(((await listed.json()) as any).resource_providers.map((p: any) => p.name)).toEqual(['cn1'])
  })

  it('serves osc-placement through the catalog', async () => {
    const env = {
      ...process.env,
      OS_AUTH_URL: `${ks.url}/v3`,
      OS_USERNAME: 'admin',
      OS_PASSWORD: ADMIN_PASSWORD,
      OS_PROJECT_NAME: 'admin',
      OS_USER_DOMAIN_NAME: 'Default',
      OS_PROJECT_DOMAIN_NAME: 'Default',
      OS_IDENTITY_API_VERSION: '3',
      OS_REGION_NAME: 'RegionOne',
    }
    const {stdout} = await run('openstack', ['resource', 'provider', 'list', '-f', 'json', '--os-placement-api-version', '1.39'], {env})
    expect(JSON.parse(stdout).map((p: any) => p.name)).toEqual(['cn1'])
    const denied = await run('openstack', ['resource', 'provider', 'list', '-f', 'json'], {
      env: {...env, OS_USERNAME: 'alice', OS_PASSWORD: 'alice-secret', OS_PROJECT_NAME: 'demo'},
    }).then(
      () => 'allowed',
      (err) => String(err.stderr),
    )
    expect(denied).toMatch(/403|Forbidden|Policy does not allow/)
  }, 60_000)

  it('placemat itself logs in as OpenStack tools do: clouds.yaml (password, application credential), OS_* variables, a cached token', async () => {
    const dir = fs.mkdtempSync(path.join(ks.dir, 'cli-'))
    const admin = await ks.admin('GET', '/users?name=admin')
    const adminId = admin.users[0].id
    // An application credential is made with the user's own token.
    const own = await ks.token('admin', ADMIN_PASSWORD, {project: 'admin'})
    const made = await fetch(`${ks.url}/v3/users/${adminId}/application_credentials`, {
      method: 'POST',
      headers: {'x-auth-token': own, 'content-type': 'application/json'},
      body: JSON.stringify({application_credential: {name: 'placemat-test'}}),
    }).then((r) => r.json() as Promise<any>)
    const clouds = {
      clouds: {
        ops: {
          auth: {
            auth_url: `${ks.url}/v3`,
            username: 'admin',
            project_name: 'admin',
            user_domain_name: 'Default',
            project_domain_name: 'Default',
          },
          region_name: 'RegionOne',
        },
        robot: {
          auth_type: 'v3applicationcredential',
          auth: {
            auth_url: ks.url,
            application_credential_id: made.application_credential.id,
            application_credential_secret: made.application_credential.secret,
          },
        },
        nowhere: {
          auth: {auth_url: `${ks.url}/v3`, username: 'admin', password: ADMIN_PASSWORD, project_name: 'admin'},
          region_name: 'Atlantis',
        },
        // "ops" but for its password: the cache must not answer it with ops's token.
        wrong: {
          auth: {
            auth_url: `${ks.url}/v3`,
            username: 'admin',
            password: 'not-it',
            project_name: 'admin',
            user_domain_name: 'Default',
            project_domain_name: 'Default',
          },
          region_name: 'RegionOne',
        },
      },
    }
    fs.writeFileSync(path.join(dir, 'clouds.yaml'), JSON.stringify(clouds))
    // The password of "ops" lives in secure.yaml, as operators keep it.
    fs.writeFileSync(path.join(dir, 'secure.yaml'), JSON.stringify({clouds: {ops: {auth: {password: ADMIN_PASSWORD}}}}))
    const env = {
      OS_CLIENT_CONFIG_FILE: path.join(dir, 'clouds.yaml'),
      OS_CLIENT_SECURE_FILE: path.join(dir, 'secure.yaml'),
      XDG_CACHE_HOME: path.join(dir, 'cache'),
    }
    const names = (r: {stdout: string}) => JSON.parse(r.stdout).resource_providers.map((p: any) => p.name)

    for (const cloud of ['ops', 'robot']) {
      const r = await placemat(['provider', 'list', '--os-cloud', cloud, '--json'], {env})
      expect(r.code, r.stderr).toBe(0)
      expect(names(r)).toEqual(['cn1'])
    }
    // The token is kept, owner-only, and used again; revoked, it is replaced by a new login.
    const cacheDir = path.join(dir, 'cache', 'placemat', 'tokens')
    const files = fs.readdirSync(cacheDir)
    expect(files).toHaveLength(2)
    for (const f of files) expect(fs.statSync(path.join(cacheDir, f)).mode & 0o077).toBe(0)
    const cached = JSON.parse(fs.readFileSync(path.join(cacheDir, files[0]), 'utf8'))
    await ks.revoke(cached.token)
    await new Promise((r) => setTimeout(r, 1500)) // the daemon's token_cache_time
    for (const cloud of ['ops', 'robot']) expect((await placemat(['provider', 'list', '--os-cloud', cloud, '--json'], {env})).code).toBe(0)

    // OS_* variables, and --os-placement-api-version as osc-placement takes it.
    const osEnv = {
      OS_AUTH_URL: `${ks.url}/v3`,
      OS_USERNAME: 'admin',
      OS_PASSWORD: ADMIN_PASSWORD,
      OS_PROJECT_NAME: 'admin',
      OS_USER_DOMAIN_NAME: 'Default',
      OS_PROJECT_DOMAIN_NAME: 'Default',
      OS_REGION_NAME: 'RegionOne',
      XDG_CACHE_HOME: env.XDG_CACHE_HOME,
    }
    const r = await placemat(['provider', 'list', '--json', '--os-placement-api-version', '1.14'], {env: osEnv})
    expect(r.code, r.stderr).toBe(0)
    expect(names(r)).toEqual(['cn1'])
    expect(JSON.parse(r.stdout).resource_providers[0].root_provider_uuid).toBeDefined()
    // A system-scoped admin (a Zed-era operator's token) is refused: scope is enforced by default.
    const {OS_PROJECT_NAME: _p, OS_PROJECT_DOMAIN_NAME: _d, ...unscoped} = osEnv
    const system = await placemat(['provider', 'list', '--json'], {env: {...unscoped, OS_SYSTEM_SCOPE: 'all'}})
    expect(system.code, system.stderr).toBe(11)
    expect(system.stderr).toContain('placement:resource_providers:list')

    // One line each, with an exit code of its own. A wrong password is refused although a token
    // of the right one is cached for the same user and project.
    const wrong = await placemat(['provider', 'list', '--os-cloud', 'wrong'], {env})
    expect(fs.readdirSync(cacheDir).length).toBeGreaterThanOrEqual(2)
    expect(wrong.code).toBe(10)
    expect(wrong.stderr.trim().split('\n')).toHaveLength(1)
    expect(wrong.stderr).toContain('refused the credentials of user admin (cloud wrong)')
    const unknown = await placemat(['provider', 'list', '--os-cloud', 'nope'], {env})
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("no cloud named 'nope'")
    const nowhere = await placemat(['provider', 'list', '--os-cloud', 'nowhere'], {env})
    expect(nowhere.code).toBe(5)
    expect(nowhere.stderr).toContain('no placement endpoint for interface public, region Atlantis')
    const stale = await ks.token('admin', ADMIN_PASSWORD, {project: 'admin'})
    await ks.revoke(stale)
    const expired = await placemat(['provider', 'list'], {env: {OS_TOKEN: stale, OS_ENDPOINT: url, OS_AUTH_TYPE: 'token'}})
    expect(expired.code, expired.stderr).toBe(10)
  }, 120_000)
  it('lets a service user with only the service role (a current nova) create providers and claim', async () => {
    const nova = await ks.token('nova', 'nova-secret', {project: 'service'})
    const created = await call('POST', '/resource_providers', nova, {name: 'cn-nova'})
    expect(created.status).toBe(200)
    const rp = (await created.json()) as any
    const inv = await call('PUT', `/resource_providers/${rp.uuid}/inventories`, nova, {
      resource_provider_generation: rp.generation,
      inventories: {VCPU: {total: 8}},
    })
    expect(inv.status).toBe(200)
    const traits = await call('PUT', `/resource_providers/${rp.uuid}/traits`, nova, {
      resource_provider_generation: rp.generation + 1,
      traits: ['COMPUTE_SOUND_MODEL_ICH9', 'HW_CPU_X86_AMXTILE'],
    })
    expect(traits.status, await traits.clone().text()).toBe(200)
    const candidates = (await (await call('GET', '/allocation_candidates?resources=VCPU:2', nova)).json()) as any
    expect(candidates.allocation_requests).toHaveLength(1)
    const consumer = '6a2c1f0e-3d8b-4c53-9a0e-2f6c8d1b7e41'
    const claim = await call('PUT', `/allocations/${consumer}`, nova, {
      ...candidates.allocation_requests[0],
      project_id: 'p',
      user_id: 'u',
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    })
    expect(claim.status, await claim.clone().text()).toBe(204)
    expect((await call('DELETE', `/allocations/${consumer}`, nova)).status).toBe(204)
    expect((await call('DELETE', `/resource_providers/${rp.uuid}`, nova)).status).toBe(204)
  })
})
