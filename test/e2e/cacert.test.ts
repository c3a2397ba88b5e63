/**
 * OS_CACERT: an endpoint whose certificate a private authority signed is trusted when the
 * authority is given (the command runs again with it, as Node takes extra authorities only at
 * start), and refused without it.
 */
import {execFileSync} from 'node:child_process'
import fs from 'node:fs'
import https from 'node:https'
import type {AddressInfo} from 'node:net'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {placemat} from '../helpers/cli.js'
import {startForeground} from '../helpers/foreground-daemon.js'

const openssl = fs.existsSync('/usr/bin/openssl')
if (!openssl) console.warn('cacert.test.ts: no openssl here: skipped')

describe.skipIf(!openssl)('OS_CACERT', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-ca-'))
  let server: https.Server
  let url: string
  beforeAll(async () => {
    const key = path.join(dir, 'key.pem')
    const cert = path.join(dir, 'cert.pem')
    execFileSync(
      '/usr/bin/openssl',
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
      {stdio: 'ignore'},
    )
    server = https.createServer({key: fs.readFileSync(key), cert: fs.readFileSync(cert)}, (req, res) => {
      res.writeHead(200, {'content-type': 'application/json'})
      res.end(JSON.stringify(req.url?.startsWith('/traits') ? {traits: ['CUSTOM_OVER_TLS']} : {versions: []}))
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => {
    server?.close()
    fs.rmSync(dir, {recursive: true, force: true})
  })

  it('trusts the given authority, and only it', async () => {
    const trusted = await placemat(['trait', 'list', '--url', url, '--token', 't', '--json'], {
      env: {OS_CACERT: path.join(dir, 'cert.pem')},
    })
    expect(trusted.code, trusted.stderr).toBe(0)
    expect(JSON.parse(trusted.stdout).traits).toEqual(['CUSTOM_OVER_TLS'])
    const untrusted = await placemat(['trait', 'list', '--url', url, '--token', 't'])
    expect(untrusted.code).toBe(5)
    expect(untrusted.stderr).toBe(
      `placemat: the TLS certificate of ${url} is not trusted (self-signed certificate): pass --os-cacert FILE or set OS_CACERT to the authority that signed it\n`,
    )
    const missing = await placemat(['trait', 'list', '--url', url, '--token', 't'], {env: {OS_CACERT: path.join(dir, 'nope.pem')}})
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('does not exist')
  })

  it('--os-cacert FILE trusts the authority as OS_CACERT does', async () => {
    const trusted = await placemat(['trait', 'list', '--url', url, '--token', 't', '--json', '--os-cacert', path.join(dir, 'cert.pem')])
    expect(trusted.code, trusted.stderr).toBe(0)
    expect(JSON.parse(trusted.stdout).traits).toEqual(['CUSTOM_OVER_TLS'])
    const missing = await placemat(['trait', 'list', '--url', url, '--token', 't', '--os-cacert', path.join(dir, 'nope.pem')])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('does not exist')
  })

  it("the local daemon's untrusted certificate is said as such, not as a daemon to start", async () => {
    const home = path.join(dir, 'home')
    fs.mkdirSync(home)
    const d = await startForeground([
      '--db',
      path.join(home, 'placemat.db'),
      '--tls-cert',
      path.join(dir, 'cert.pem'),
      '--tls-key',
      path.join(dir, 'key.pem'),
    ])
    const untrusted = await placemat(['trait', 'list'], {env: {PLACEMAT_HOME: home}})
    expect(untrusted.code).toBe(5)
    expect(untrusted.stderr).toBe(
      `placemat: the TLS certificate of ${d.url} is not trusted (self-signed certificate): pass --os-cacert FILE or set OS_CACERT to the authority that signed it\n`,
    )
    const trusted = await placemat(['trait', 'list', '--os-cacert', path.join(dir, 'cert.pem'), '--json'], {env: {PLACEMAT_HOME: home}})
    expect(trusted.code, trusted.stderr).toBe(0)
    await d.stop()
  })
})
