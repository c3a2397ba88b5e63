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
import {BIN} from '../helpers/cli.js'
import {ADMIN_PASSWORD, keystoneAvailable, startKeystone, type Keystone} from '../helpers/keystone.js'

const run = promisify(execFile)
if (!keystoneAvailable) console.warn('keystone.test.ts: no Keystone here (apt-get install python3-keystone uwsgi-core uwsgi-plugin-python3): skipped')

describe.skipIf(!keystoneAvailable)('the daemon behind Keystone', () => {
  let ks: Keystone
  let daemon: ChildProcess
  let url: string
  const H = {'openstack-api-version': 'placement latest', 'content-type': 'application/json'}
  const call = (method: string, p: string, token?: string, body?: unknown) =>
    fetch(`${url}${p}`, {method, headers: {...H, ...(token ? {'x-auth-token': token} : {})}, body: body === undefined ? undefined : JSON.stringify(body)})

  beforeAll(async () => {
    ks = await startKeystone()
    await ks.project('service')
    await ks.user('placement', 'placement-secret', {project: 'service', projectRoles: ['admin']})
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
    daemon = spawn(process.execPath, [BIN, 'daemon', 'start', '--foreground', '--db', path.join(ks.dir, 'placemat.db'), '--port', '0', '--config-file', conf], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const warnings: string[] = []
    readline.createInterface({input: daemon.stderr!}).on('line', (l) => warnings.push(l))
    url = await new Promise<string>((resolve, reject) => {
      readline.createInterface({input: daemon.stdout!}).on('line', (l) => {
        const m = /listening on (http:\/\/\S+)/.exec(l)
        if (m) resolve(m[1])
      })
      daemon.once('exit', (code) => reject(new Error(`daemon exited ${code}: ${warnings.join('\n')}`)))
    })
    // What placement.conf says that placemat does not read is said, not silently misread.
    expect(warnings.join('\n')).toContain('[keystone_authtoken] memcached_servers ignored')
    expect(warnings.join('\n')).toContain('[placement_database] ignored')
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

  it("applies Placement's policy to the token's roles, project and scope", async () => {
    const admin = await ks.token('admin', ADMIN_PASSWORD, {project: 'admin'})
    const member = await ks.token('alice', 'alice-secret', {project: 'demo'})
    const projectReader = await ks.token('rita', 'rita-secret', {project: 'demo'})
    const systemReader = await ks.token('rita', 'rita-secret', 'system')
    const demo = await ks.project('demo')
    expect((await call('POST', '/resource_providers', admin, {name: 'cn1'})).status).toBe(200)
    expect((await call('GET', '/resource_providers', member)).status).toBe(403)
    expect((await call('GET', '/resource_providers', projectReader)).status).toBe(403)
    expect((await call('GET', `/usages?project_id=${demo}`, projectReader)).status).toBe(200)
    expect((await call('GET', '/usages?project_id=someone-else', projectReader)).status).toBe(403)
    const listed = await call('GET', '/resource_providers', systemReader)
    expect(listed.status).toBe(200)
    expect(((await listed.json()) as any).resource_providers.map((p: any) => p.name)).toEqual(['cn1'])
    expect((await call('POST', '/resource_providers', systemReader, {name: 'cn2'})).status).toBe(403)
  })

  it('serves osc-placement through the catalog', async () => {
    const svc = await ks.admin('POST', '/services', {service: {type: 'placement', name: 'placement'}})
    await ks.admin('POST', '/endpoints', {endpoint: {service_id: svc.service.id, interface: 'public', url, region_id: 'RegionOne'}})
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
    const denied = await run('openstack', ['resource', 'provider', 'list', '-f', 'json'], {env: {...env, OS_USERNAME: 'alice', OS_PASSWORD: 'alice-secret', OS_PROJECT_NAME: 'demo'}}).then(
      () => 'allowed',
      (err) => String(err.stderr),
    )
    expect(denied).toMatch(/403|Forbidden|Policy does not allow/)
  }, 60_000)
})
