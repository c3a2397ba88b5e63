/**
 * The daemon behind Debian's haproxy, as operators deploy Placement: TLS terminated at haproxy
 * with a certificate of the test's own authority, the API published under /placement, haproxy
 * setting X-Forwarded-For/-Proto/-Host/-Prefix. osc-placement (`openstack resource provider
 * ...`) works through it; Location and links name https and /placement; placemat's log names the
 * real client (the test's client connects to haproxy from 127.0.0.2, haproxy to placemat from
 * 127.0.0.1, the one trusted proxy) and the client's global request id. A second haproxy
 * re-encrypts to a placemat serving TLS itself under --base-path. Without --trusted-proxies a
 * client's forwarding headers change nothing. The detached `daemon start` with a self-signed
 * certificate waits for its https URL, and `daemon status` finds it answering.
 * Skipped, saying so, where haproxy, openssl or osc-placement are missing.
 */
import {execFile, spawn, type ChildProcess} from 'node:child_process'
import fs from 'node:fs'
import https from 'node:https'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {BIN, childEnv, placemat} from '../helpers/cli.js'
import {makeCa, opensslAvailable, serverCert, OPENSSL, type Ca} from '../helpers/certs.js'
import {freePort, haproxyAvailable, startHaproxy, type Haproxy} from '../helpers/haproxy.js'

const oscAvailable = fs.existsSync('/usr/bin/openstack') && fs.existsSync('/usr/lib/python3/dist-packages/osc_placement')
if (!haproxyAvailable) console.warn('behind-balancer.test.ts: no haproxy here (apt-get install haproxy): its tests skipped')
if (!opensslAvailable) console.warn('behind-balancer.test.ts: no openssl here: skipped')
if (!oscAvailable)
  console.warn(
    'behind-balancer.test.ts: no openstack CLI with osc-placement here (apt-get install python3-openstackclient python3-osc-placement): its steps skipped',
  )

const GLOBAL_ID = 'req-6a1f0c2e-9b7d-4e3a-8c5f-2d4b6e8a0c1f'

interface Daemon {
  url: string
  port: number
  /** The JSON lines it logged so far. */
  log: any[]
  stop(): Promise<void>
}

/** `placemat daemon start --foreground` on a file of `dir`, noauth2, logging every request. */
async function startDaemon(dir: string, name: string, args: string[]): Promise<Daemon> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      BIN,
      'daemon',
      'start',
      '--foreground',
      '--db',
      path.join(dir, `${name}.db`),
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--auth',
      'noauth2',
      '--log-level',
      'info',
      ...args,
    ],
    {stdio: ['ignore', 'pipe', 'pipe'], env: childEnv()},
  )
  const log: any[] = []
  const said: string[] = []
  readline.createInterface({input: child.stderr!}).on('line', (l) => said.push(l))
  const url = await new Promise<string>((resolve, reject) => {
    readline.createInterface({input: child.stdout!}).on('line', (l) => {
      if (l.startsWith('{')) log.push(JSON.parse(l))
      const m = /listening on (https?:\/\/\S+)/.exec(l)
      if (m) resolve(m[1])
    })
    child.once('exit', (code) => reject(new Error(`daemon exited ${code}: ${said.join('\n')}`)))
  })
  const stop = async () => {
    if (child.exitCode !== null) return
    const gone = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    await gone
  }
  return {url, port: Number(new URL(url).port), log, stop}
}

/** The access-log line of the request placemat answered with `requestId`, once it is written. */
async function lineOf(daemon: Daemon, requestId: string): Promise<any> {
  const until = Date.now() + 20_000
  for (;;) {
    const line = daemon.log.find((l) => l.msg === 'request' && l.request_id === requestId)
    if (line || Date.now() > until) return line
    await new Promise((r) => setTimeout(r, 50))
  }
}

interface Answer {
  status: number
  headers: http.IncomingHttpHeaders
  body: any
}

/** A request from the local address `from` (127.0.0.2: not the proxy's 127.0.0.1). */
function request(
  url: string,
  method: string,
  opts: {from?: string; ca?: string; headers?: Record<string, string>; body?: unknown} = {},
): Promise<Answer> {
  const u = new URL(url)
  const lib = u.protocol === 'https:' ? https : http
  const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body)
  return new Promise((resolve, reject) => {
    const req = lib.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method,
        localAddress: opts.from,
        ...(opts.ca ? {ca: fs.readFileSync(opts.ca)} : {}),
        agent: false,
        headers: {
          'x-auth-token': 'admin',
          'openstack-api-version': 'placement 1.39',
          ...(payload === undefined ? {} : {'content-type': 'application/json'}),
          ...opts.headers,
        },
      },
      (res) => {
        let text = ''
        res.on('data', (d) => (text += d))
        res.on('end', () => resolve({status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : undefined}))
      },
    )
    req.on('error', reject)
    req.end(payload)
  })
}

/** What a client forges, hoping placemat believes it. */
const FORGED = {
  'x-forwarded-for': '203.0.113.66',
  'x-forwarded-prefix': '/evil',
  'x-forwarded-host': 'evil.example',
  'x-forwarded-proto': 'http',
  forwarded: 'for=203.0.113.77;proto=http;host=evil.example',
}

/**
 * The haproxy frontend both configurations share: TLS, and every forwarding header set or
 * removed, never passed on from the client (placemat believes what its trusted proxy sends).
 */
const frontend = (port: number, pem: string) => `global
  maxconn 256
defaults
  mode http
  timeout connect 5s
  timeout client 60s
  timeout server 60s
frontend placement
  bind 127.0.0.1:${port} ssl crt ${pem}
  http-request del-header Forwarded
  http-request del-header X-Forwarded-Prefix
  http-request set-header X-Forwarded-Proto https
  http-request set-header X-Forwarded-Host %[req.hdr(host)]
  option forwardfor
`

/** `openstack ARGS` (osc-placement) against `endpoint`, with no auth but noauth2's admin token. */
function openstack(endpoint: string, ca: string, args: string[]): Promise<string> {
  const env = childEnv()
  return new Promise((resolve, reject) => {
    execFile(
      'openstack',
      [
        '--os-auth-type',
        'admin_token',
        '--os-token',
        'admin',
        '--os-endpoint',
        endpoint,
        '--os-cacert',
        ca,
        '--os-placement-api-version',
        '1.39',
        ...args,
      ],
      {env, timeout: 120_000},
      (err, stdout, stderr) => (err ? reject(new Error(`openstack ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout)),
    )
  })
}

const canRun = haproxyAvailable && opensslAvailable

describe.skipIf(!canRun)('behind haproxy', () => {
  let dir: string
  let ca: Ca
  let edgeCert: {cert: string; key: string; both: string}
  let daemonCert: {cert: string; key: string; both: string}
  const stops: (() => Promise<void>)[] = []

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-balancer-'))
    ca = makeCa(dir)
    edgeCert = serverCert(ca, 'haproxy')
    daemonCert = serverCert(ca, 'placemat')
  })
  afterAll(async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined)
    fs.rmSync(dir, {recursive: true, force: true})
  })

  describe('TLS at haproxy, /placement stripped there and named by X-Forwarded-Prefix', () => {
    let daemon: Daemon
    let proxy: Haproxy
    let endpoint: string
    beforeAll(async () => {
      daemon = await startDaemon(dir, 'behind', ['--trusted-proxies', '127.0.0.1'])
      stops.push(daemon.stop)
      proxy = await startHaproxy(
        dir,
        'terminating',
        (port) =>
          frontend(port, edgeCert.both) +
          `  http-request set-header X-Forwarded-Prefix /placement
  use_backend placemat if { path /placement } || { path_beg /placement/ }
backend placemat
  http-request replace-path ^/placement/?(.*)$ /\\1
  server placemat1 127.0.0.1:${daemon.port}
`,
      )
      stops.push(proxy.stop)
      endpoint = `https://127.0.0.1:${proxy.port}/placement`
    }, 60_000)

    it.skipIf(!oscAvailable)(
      'serves osc-placement: provider create, list, show, inventory set, resource class create',
      async () => {
        const created = JSON.parse(await openstack(endpoint, ca.cert, ['resource', 'provider', 'create', 'cn-osc', '-f', 'json']))
        expect(created.name).toBe('cn-osc')
        const listed = JSON.parse(await openstack(endpoint, ca.cert, ['resource', 'provider', 'list', '-f', 'json']))
        expect(listed.map((p: any) => p.name)).toContain('cn-osc')
        const shown = JSON.parse(await openstack(endpoint, ca.cert, ['resource', 'provider', 'show', created.uuid, '-f', 'json']))
        expect(shown).toMatchObject({uuid: created.uuid, name: 'cn-osc'})
        const inventory = JSON.parse(
          await openstack(endpoint, ca.cert, [
            'resource',
            'provider',
            'inventory',
            'set',
            created.uuid,
            '--resource',
            'VCPU=16',
            '--resource',
            'MEMORY_MB=65536',
            '-f',
            'json',
          ]),
        )
        expect(inventory.map((i: any) => [i.resource_class, i.total]).sort()).toEqual([
          ['MEMORY_MB', 65536],
          ['VCPU', 16],
        ])
        await openstack(endpoint, ca.cert, ['resource', 'class', 'create', 'CUSTOM_BEHIND_HAPROXY'])
        const cls = JSON.parse(await openstack(endpoint, ca.cert, ['resource', 'class', 'show', 'CUSTOM_BEHIND_HAPROXY', '-f', 'json']))
        expect(cls.name).toBe('CUSTOM_BEHIND_HAPROXY')
        // Every one of those requests reached placemat through haproxy, and was logged as from loopback's client side.
        const through = daemon.log.filter((l) => l.msg === 'request' && l.method === 'POST' && l.path === '/resource_providers')
        expect(through.length).toBeGreaterThan(0)
      },
      180_000,
    )

    it('names https and /placement in Location and links, and logs the real client and its global request id', async () => {
      const r = await request(`${endpoint}/resource_providers`, 'POST', {
        from: '127.0.0.2',
        ca: ca.cert,
        headers: {...FORGED, 'x-openstack-request-id': GLOBAL_ID},
        body: {name: 'cn-node'},
      })
      expect(r.status).toBe(200)
      expect(r.headers.location).toBe(`https://127.0.0.1:${proxy.port}/placement/resource_providers/${r.body.uuid}`)
      expect(r.body.links.map((l: any) => l.href)).toEqual(
        ['', '/inventories', '/usages', '/aggregates', '/traits', '/allocations'].map(
          (rel) => `/placement/resource_providers/${r.body.uuid}${rel}`,
        ),
      )
      // placemat's own id in the answer, the client's as the global one in the log.
      const own = String(r.headers['x-openstack-request-id'])
      expect(own).toMatch(/^req-/)
      expect(own).not.toBe(GLOBAL_ID)
      const line = await lineOf(daemon, own)
      // Not haproxy's 127.0.0.1, not what the client forged: the address haproxy saw it connect from.
      expect(line).toMatchObject({remote_addr: '127.0.0.2', global_request_id: GLOBAL_ID, path: '/resource_providers', status: 200})
      console.log(`behind haproxy: Location ${r.headers.location}\nlog: ${JSON.stringify(line)}`)

      const rc = await request(`${endpoint}/resource_classes/CUSTOM_EDGE`, 'PUT', {from: '127.0.0.2', ca: ca.cert})
      expect(rc.headers.location).toBe(`https://127.0.0.1:${proxy.port}/placement/resource_classes/CUSTOM_EDGE`)
      const shown = await request(`${endpoint}/resource_classes/CUSTOM_EDGE`, 'GET', {ca: ca.cert})
      expect(shown.body.links).toEqual([{rel: 'self', href: '/placement/resource_classes/CUSTOM_EDGE'}])
      const ill = await request(`${endpoint}/`, 'GET', {ca: ca.cert, headers: {'x-openstack-request-id': 'req-not-a-uuid'}})
      expect((await lineOf(daemon, String(ill.headers['x-openstack-request-id']))).global_request_id).toBeUndefined()
    })

    it('believes no forwarding header from a client that is not the trusted proxy', async () => {
      const r = await request(`${daemon.url}/resource_providers`, 'POST', {
        from: '127.0.0.2',
        headers: {...FORGED, 'x-forwarded-prefix': '/placement'},
        body: {name: 'cn-direct'},
      })
      expect(r.status).toBe(200)
      expect(r.headers.location).toBe(`${daemon.url}/resource_providers/${r.body.uuid}`)
      expect(r.body.links[0].href).toBe(`/resource_providers/${r.body.uuid}`)
      expect((await lineOf(daemon, String(r.headers['x-openstack-request-id']))).remote_addr).toBe('127.0.0.2')
    })
  })

  describe('TLS at placemat too, haproxy re-encrypting and passing /placement on to --base-path', () => {
    let daemon: Daemon
    let proxy: Haproxy
    beforeAll(async () => {
      daemon = await startDaemon(dir, 'tls', [
        '--trusted-proxies',
        '127.0.0.1/32',
        '--base-path',
        '/placement',
        '--tls-cert',
        daemonCert.cert,
        '--tls-key',
        daemonCert.key,
      ])
      stops.push(daemon.stop)
      proxy = await startHaproxy(
        dir,
        'reencrypting',
        (port) =>
          frontend(port, edgeCert.both) +
          `  default_backend placemat
backend placemat
  server placemat1 127.0.0.1:${daemon.port} ssl verify required ca-file ${ca.cert}
`,
      )
      stops.push(proxy.stop)
    }, 60_000)

    it('serves under /placement over HTTPS, through haproxy and directly', async () => {
      expect(daemon.url).toMatch(/^https:/)
      const r = await request(`https://127.0.0.1:${proxy.port}/placement/resource_providers`, 'POST', {
        from: '127.0.0.2',
        ca: ca.cert,
        headers: FORGED,
        body: {name: 'cn-tls'},
      })
      expect(r.status).toBe(200)
      expect(r.headers.location).toBe(`https://127.0.0.1:${proxy.port}/placement/resource_providers/${r.body.uuid}`)
      expect(r.body.links[0].href).toBe(`/placement/resource_providers/${r.body.uuid}`)
      const line = await lineOf(daemon, String(r.headers['x-openstack-request-id']))
      expect(line).toMatchObject({remote_addr: '127.0.0.2', path: '/placement/resource_providers'})
      // Straight to placemat, with or without the base path.
      const direct = await request(`${daemon.url}/placement/resource_providers/${r.body.uuid}`, 'GET', {ca: ca.cert})
      expect(direct.body.links[0].href).toBe(`/placement/resource_providers/${r.body.uuid}`)
      expect((await request(`${daemon.url}/resource_providers/${r.body.uuid}`, 'GET', {ca: ca.cert})).status).toBe(200)
    })

    it.skipIf(!oscAvailable)(
      "serves osc-placement and placemat's own command line straight over its HTTPS",
      async () => {
        const endpoint = `${daemon.url}/placement`
        const created = JSON.parse(await openstack(endpoint, ca.cert, ['resource', 'provider', 'create', 'cn-osc-tls', '-f', 'json']))
        expect(JSON.parse(await openstack(endpoint, ca.cert, ['resource', 'provider', 'show', created.uuid, '-f', 'json'])).name).toBe(
          'cn-osc-tls',
        )
        const cli = await placemat(['provider', 'list', '--url', endpoint, '--token', 'admin', '--json'], {env: {OS_CACERT: ca.cert}})
        expect(cli.code, cli.stderr).toBe(0)
        expect(JSON.stringify(JSON.parse(cli.stdout))).toContain('cn-osc-tls')
        const untrusted = await placemat(['provider', 'list', '--url', endpoint, '--token', 'admin'])
        expect(untrusted.code).toBe(5)
      },
      120_000,
    )
  })
})

describe.skipIf(!opensslAvailable)('daemon start with a certificate', () => {
  let dir: string
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-tls-start-'))
  })
  afterAll(async () => {
    await placemat(['daemon', 'stop', '--db', path.join(dir, 'p.db')], {env: {PLACEMAT_HOME: dir}})
    fs.rmSync(dir, {recursive: true, force: true})
  })

  it('refuses a certificate or key it cannot serve in one line naming the file, before listening', async () => {
    const missing = path.join(dir, 'missing.pem')
    const r = await placemat([
      'daemon',
      'start',
      '--foreground',
      '--db',
      path.join(dir, 'refused.db'),
      '--port',
      '0',
      '--tls-cert',
      missing,
      '--tls-key',
      missing,
    ])
    expect(r.code).toBe(1)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toContain(`the TLS certificate ${missing} cannot be read (ENOENT)`)
    expect(fs.existsSync(path.join(dir, 'refused.db'))).toBe(false)
    const proxies = await placemat([
      'daemon',
      'start',
      '--foreground',
      '--db',
      path.join(dir, 'refused.db'),
      '--port',
      '0',
      '--trusted-proxies',
      'balancer.example',
    ])
    expect(proxies.code).toBe(1)
    expect(proxies.stderr).toContain("--trusted-proxies: 'balancer.example' is not an IP address or a CIDR block")
  })

  it('detached, with a self-signed certificate: waits for its https URL, records it, and daemon status finds it answering', async () => {
    const cert = path.join(dir, 'self.pem')
    const key = path.join(dir, 'self-key.pem')
    await new Promise<void>((resolve, reject) =>
      execFile(
        OPENSSL,
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-keyout',
          key,
          '-out',
          cert,
          '-days',
          '1',
          '-subj',
          '/CN=127.0.0.1',
          '-addext',
          'subjectAltName=IP:127.0.0.1',
        ],
        (err) => (err ? reject(err) : resolve()),
      ),
    )
    const port = await freePort()
    const db = path.join(dir, 'p.db')
    const env = {PLACEMAT_HOME: dir}
    const started = await placemat(
      ['daemon', 'start', '--db', db, '--port', String(port), '--auth', 'noauth2', '--tls-cert', cert, '--tls-key', key],
      {env},
    )
    expect(started.code, started.stderr).toBe(0)
    expect(started.stdout).toContain(`listening on https://127.0.0.1:${port}`)
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'p.pid'), 'utf8')).url).toBe(`https://127.0.0.1:${port}`)
    const status = await placemat(['daemon', 'status', '--db', db, '--json'], {env})
    expect(JSON.parse(status.stdout)).toMatchObject({running: true, answering: true, url: `https://127.0.0.1:${port}`})
    // The certificate is trusted once given.
    const listed = await placemat(['trait', 'list', '--url', `https://127.0.0.1:${port}`, '--token', 'admin', '--json'], {
      env: {OS_CACERT: cert},
    })
    expect(listed.code, listed.stderr).toBe(0)
    const stopped = await placemat(['daemon', 'stop', '--db', db], {env})
    expect(stopped.code, stopped.stderr).toBe(0)
  }, 60_000)
})
