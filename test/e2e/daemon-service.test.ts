/**
 * The daemon as a service: systemd's notify protocol seen by a listener on NOTIFY_SOCKET (no
 * systemd here), SIGHUP reloading the policy and the log level without dropping a connection
 * (and keeping the old on a bad file), and SIGTERM draining with writes in flight.
 */
import fs from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import {DgramSocket} from 'node-unix-socket'
import {afterAll, describe, expect, it} from 'vitest'
import https from 'node:https'
import tls from 'node:tls'
import {placemat} from '../helpers/cli.js'
import {makeCa, opensslAvailable, serverCert} from '../helpers/certs.js'
import {freePort, startForeground, until} from '../helpers/foreground-daemon.js'

const HEADERS = {'x-auth-token': 'admin', 'openstack-api-version': 'placement latest', 'content-type': 'application/json'}
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-service-'))
const listeners: DgramSocket[] = []
afterAll(() => {
  for (const l of listeners) l.close()
  fs.rmSync(dir, {recursive: true, force: true})
})

/** A stand-in for systemd: every datagram the daemon sends to NOTIFY_SOCKET. */
function notifyListener(name: string): {socket: string; messages: string[]} {
  const socket = path.join(dir, name)
  const messages: string[] = []
  const l = new DgramSocket()
  l.on('data', (buf: Buffer) => messages.push(buf.toString()))
  l.bind(socket)
  listeners.push(l)
  return {socket, messages}
}

/** One request on a kept-alive connection of `agent`: its status and the local port it went out on. */
function get(agent: http.Agent, url: string): Promise<{status: number; port: number}> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, {agent, headers: HEADERS}, (res) => {
      res.resume()
      res.on('end', () => resolve({status: res.statusCode!, port: req.socket!.localPort!}))
    })
    req.on('error', reject)
  })
}

describe('systemd notify and SIGHUP', () => {
  it('READY, WATCHDOG, RELOADING and STOPPING reach NOTIFY_SOCKET; a policy change takes effect on SIGHUP, a bad file keeps the old rules, the log level follows placement.conf, and no connection is dropped', async () => {
    const {socket, messages} = notifyListener('notify.sock')
    const policyFile = path.join(dir, 'policy.yaml')
    const conf = path.join(dir, 'placement.conf')
    fs.writeFileSync(policyFile, '{}\n')
    fs.writeFileSync(conf, `[DEFAULT]\ndebug = false\n[oslo_policy]\npolicy_file = ${policyFile}\n`)
    const d = await startForeground(['--db', path.join(dir, 'notify.db'), '--auth', 'noauth2', '--config-file', conf], {
      NOTIFY_SOCKET: socket,
      WATCHDOG_USEC: '300000',
    })
    await until(() => messages.some((m) => m.startsWith('READY=1')), 'READY=1')
    const ready = messages.find((m) => m.startsWith('READY=1'))!
    expect(ready).toContain(`MAINPID=${d.child.pid}`)
    expect(ready).toContain(`STATUS=serving ${d.url}`)
    await until(() => messages.filter((m) => m === 'WATCHDOG=1').length >= 2, 'two WATCHDOG=1')

    const agent = new http.Agent({keepAlive: true, maxSockets: 1})
    const before = await get(agent, d.url + '/resource_providers')
    expect(before.status).toBe(200)

    // A rule that forbids listing providers, then SIGHUP.
    fs.writeFileSync(policyFile, '"placement:resource_providers:list": "!"\n')
    fs.writeFileSync(conf, `[DEFAULT]\ndebug = true\n[oslo_policy]\npolicy_file = ${policyFile}\n`)
    const readies = () => messages.filter((m) => m.startsWith('READY=1')).length
    d.child.kill('SIGHUP')
    await until(() => readies() === 2, 'READY=1 after the reload')
    expect(messages.some((m) => m.startsWith('RELOADING=1\nMONOTONIC_USEC='))).toBe(true)
    expect(messages.filter((m) => m.startsWith('READY=1'))[1]).toContain(
      'policy: 1 rule(s) changed (placement:resource_providers:list); log level info -> debug',
    )
    const after = await get(agent, d.url + '/resource_providers')
    expect(after.status).toBe(403)
    expect(after.port).toBe(before.port)
    expect((await get(agent, d.url + '/')).status).toBe(200)
    await until(() => d.stdout().includes('"level":20'), 'a debug line in the log')

    // A file that cannot be parsed: refused, the rules in force stay.
    fs.writeFileSync(policyFile, 'bad: [\n')
    d.child.kill('SIGHUP')
    await until(() => readies() === 3, 'READY=1 after the refused reload')
    expect(d.stderr()).toMatch(new RegExp(`reload: policy not reloaded \\(policy file ${policyFile}: .*\\); the rules in force stay`))
    const kept = await get(agent, d.url + '/resource_providers')
    expect(kept).toEqual({status: 403, port: before.port})
    expect(d.child.exitCode).toBe(null)

    d.child.kill('SIGTERM')
    expect(await d.exited).toBe(0)
    expect(messages.some((m) => m.startsWith('STOPPING=1'))).toBe(true)
    agent.destroy()
  })
})

/** The certificate a fresh TLS connection to `url` is served. */
function servedCertificate(url: string, ca: string): Promise<string> {
  const {hostname, port} = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = tls.connect({host: hostname, port: Number(port), ca: fs.readFileSync(ca), servername: 'localhost'}, () => {
      resolve(socket.getPeerCertificate().fingerprint256)
      socket.end()
    })
    socket.on('error', reject)
  })
}

describe.skipIf(!opensslAvailable)('SIGHUP and TLS', () => {
  it('swaps the certificate for new connections, keeps one that cannot be served', async () => {
    const ca = makeCa(dir)
    const first = serverCert(ca, 'hup-first')
    const second = serverCert(ca, 'hup-second')
    const certFile = path.join(dir, 'served.crt')
    const keyFile = path.join(dir, 'served.key')
    fs.copyFileSync(first.cert, certFile)
    fs.copyFileSync(first.key, keyFile)
    const d = await startForeground(['--db', path.join(dir, 'tls.db'), '--auth', 'noauth2', '--tls-cert', certFile, '--tls-key', keyFile])
    const url = d.url
    expect(url).toMatch(/^https:/)
    const agent = new https.Agent({keepAlive: true, maxSockets: 1, ca: fs.readFileSync(ca.cert)})
    const before = await servedCertificate(url, ca.cert)
    fs.copyFileSync(second.cert, certFile)
    fs.copyFileSync(second.key, keyFile)
    d.child.kill('SIGHUP')
    await until(() => d.stdout().includes('TLS certificate replaced'), 'the reload')
    const after = await servedCertificate(url, ca.cert)
    expect(after).not.toBe(before)
    // A key that is not the certificate's: refused, the served pair stays.
    fs.copyFileSync(first.key, keyFile)
    d.child.kill('SIGHUP')
    await until(() => d.stderr().includes('TLS certificate not reloaded'), 'the refused reload')
    expect(await servedCertificate(url, ca.cert)).toBe(after)
    const res = await new Promise<number>((resolve, reject) =>
      https.get(url + '/', {agent}, (r) => (r.resume(), resolve(r.statusCode!))).on('error', reject),
    )
    expect(res).toBe(200)
    agent.destroy()
    d.child.kill('SIGTERM')
    expect(await d.exited).toBe(0)
  })
})

describe('SIGTERM drains', () => {
  it('with writes in flight: every one answered and committed, health 503 "stopping" during the drain, answers say Connection: close, exit 0 within the timeout', async () => {
    const db = path.join(dir, 'drain.db')
    // Each write waits 1.5 s inside its transaction, before COMMIT.
    const d = await startForeground(['--db', db, '--auth', 'noauth2', '--shutdown-delay', '2', '--shutdown-timeout', '60'], {
      PLACEMAT_TEST_PAUSE_IN_TX: '1500',
    })
    const names = ['drain-1', 'drain-2', 'drain-3', 'drain-4', 'drain-5']
    const writes = names.map((name) =>
      fetch(d.url + '/resource_providers', {method: 'POST', headers: HEADERS, body: JSON.stringify({name})}).then(async (r) => ({
        status: r.status,
        body: await r.text(),
      })),
    )
    await until(() => d.stderr().includes('paused in transaction'), 'a write inside its transaction')
    d.child.kill('SIGTERM')
    // During the delay: health says stopping, other requests are still served, each closing its connection.
    let health: Response | undefined
    await until(async () => {
      health = await fetch(d.url + '/placemat/v1/health', {headers: HEADERS})
      return health.status === 503
    }, 'health 503')
    const body = (await health!.json()) as {errors: Array<{title: string; detail: string; code: string}>}
    expect(body.errors[0]).toMatchObject({title: 'Service Stopping', code: 'placemat.stopping'})
    expect(body.errors[0].detail).toContain('stopping')
    const root = await fetch(d.url + '/', {headers: HEADERS})
    expect(root.status).toBe(200)
    expect(root.headers.get('connection')).toBe('close')

    const answers = await Promise.all(writes)
    expect(answers.map((a) => a.status)).toEqual(names.map(() => 200))
    expect(await d.exited).toBe(0)
    expect(d.stdout()).toContain('"event":"stopped"')

    // Every acknowledged write is in the database.
    const listed = await placemat(['provider', 'list', '--db', db, '-f', 'value', '-c', 'name'])
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout.trim().split('\n').sort()).toEqual(names)
  })

  it('a write still in flight at the shutdown timeout: the daemon exits 1 saying so', async () => {
    const d = await startForeground(['--db', path.join(dir, 'late.db'), '--auth', 'noauth2', '--shutdown-timeout', '2'], {
      PLACEMAT_TEST_PAUSE_IN_TX: '30000',
    })
    const write = fetch(d.url + '/resource_providers', {method: 'POST', headers: HEADERS, body: JSON.stringify({name: 'late'})}).catch(
      () => 'dropped',
    )
    await until(() => d.stderr().includes('paused in transaction'), 'the write inside its transaction')
    d.child.kill('SIGTERM')
    expect(await d.exited).toBe(1)
    expect(d.stderr()).toContain('shutdown timeout (2 s) reached with 1 request(s) unanswered')
    await write
  })

  it('a client connected and silent does not hold the drain: exit 0, not the timeout', async () => {
    const d = await startForeground(['--db', path.join(dir, 'silent.db'), '--auth', 'noauth2', '--shutdown-timeout', '30'])
    // Serving (its signal handlers are in place once it serves).
    await until(async () => (await fetch(d.url + '/placemat/v1/health').catch(() => undefined))?.status === 200, 'health 200')
    const {port} = new URL(d.url)
    const silent = net.connect(Number(port), '127.0.0.1')
    silent.on('error', () => undefined)
    await new Promise((r) => silent.once('connect', r))
    d.child.kill('SIGTERM')
    expect(await d.exited).toBe(0)
    expect(d.stderr()).not.toContain('shutdown timeout')
    silent.destroy()
  })

  it('refuses a shutdown delay not shorter than the timeout', async () => {
    const r = await placemat([
      'daemon',
      'start',
      '--foreground',
      '--db',
      path.join(dir, 'x.db'),
      '--shutdown-delay',
      '30',
      '--shutdown-timeout',
      '30',
    ])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('--shutdown-delay (30 s) must be shorter than --shutdown-timeout (30 s)')
  })

  it('`daemon stop` waits for a drain longer than it used to (12 s of shutdown delay)', async () => {
    const db = path.join(dir, 'detached.db')
    const port = String(await freePort())
    const started = await placemat(['daemon', 'start', '--db', db, '--port', port, '--shutdown-delay', '12', '--shutdown-timeout', '20'])
    expect(started.code, started.stderr).toBe(0)
    const stopped = await placemat(['daemon', 'stop', '--db', db])
    expect(stopped.code, stopped.stderr).toBe(0)
    expect(stopped.stdout).toMatch(/stopped daemon pid \d+/)
  })
})
