/**
 * HTTPS at the daemon (--tls-cert, --tls-key): a certificate or key that cannot be served is
 * refused naming its file; the daemon speaks TLS 1.2 or later; reloadTls() swaps the pair for new
 * connections without dropping those open, and keeps the old pair when the new one is bad.
 */
import {X509Certificate} from 'node:crypto'
import fs from 'node:fs'
import https from 'node:https'
import os from 'node:os'
import path from 'node:path'
import tls from 'node:tls'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {EdgeOptionsError, resolveEdge} from '../../src/daemon/edge-options.js'
import {startServer, type RunningServer} from '../../src/daemon/server.js'
import {TlsFilesError, readTlsFiles} from '../../src/daemon/tls-files.js'
import {makeCa, opensslAvailable, serverCert, type Ca} from '../helpers/certs.js'

if (!opensslAvailable) console.warn('tls.test.ts: no openssl here: skipped')

describe.skipIf(!opensslAvailable)('HTTPS at the daemon', () => {
  let dir: string
  let ca: Ca
  let first: {cert: string; key: string}
  let second: {cert: string; key: string}
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-tls-'))
    ca = makeCa(dir)
    first = serverCert(ca, 'first')
    second = serverCert(ca, 'second')
  })
  afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

  const write = (name: string, text: string | Buffer) => {
    const file = path.join(dir, name)
    fs.writeFileSync(file, text)
    return file
  }

  it('refuses a certificate or key that cannot be served, naming the file', () => {
    const missing = path.join(dir, 'nope.pem')
    const notPem = write('not-pem.pem', 'hello\n')
    const garbage = write('garbage.pem', '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n')
    const cases: [{certFile: string; keyFile: string}, RegExp][] = [
      [{certFile: missing, keyFile: first.key}, new RegExp(`certificate ${missing} cannot be read \\(ENOENT\\)`)],
      [{certFile: first.cert, keyFile: missing}, new RegExp(`key ${missing} cannot be read`)],
      [{certFile: notPem, keyFile: first.key}, new RegExp(`certificate ${notPem} is not PEM`)],
      [{certFile: first.cert, keyFile: first.cert}, new RegExp(`key ${first.cert} is not PEM`)],
      [{certFile: garbage, keyFile: first.key}, new RegExp(`certificate ${garbage} cannot be parsed`)],
      [{certFile: first.cert, keyFile: second.key}, new RegExp(`key ${second.key} is not the key of the certificate in ${first.cert}`)],
      [{certFile: dir, keyFile: first.key}, new RegExp(`certificate ${dir} cannot be read \\(EISDIR\\)`)],
    ]
    for (const [files, message] of cases) expect(() => readTlsFiles(files)).toThrow(message)
    for (const [files] of cases) expect(() => readTlsFiles(files)).toThrow(TlsFilesError)
    expect(readTlsFiles({certFile: first.cert, keyFile: first.key}).notAfter.getTime()).toBeGreaterThan(Date.now())
  })

  it('refuses the edge flags that cannot be used, each in one line', () => {
    expect(() => resolveEdge({'tls-cert': first.cert})).toThrow('--tls-cert needs --tls-key')
    expect(() => resolveEdge({'tls-key': first.key})).toThrow('--tls-key needs --tls-cert')
    expect(() => resolveEdge({'trusted-proxies': '10.0.0.0/8,proxy.example'})).toThrow(EdgeOptionsError)
    expect(() => resolveEdge({'trusted-proxies': '10.0.0.0/8,proxy.example'})).toThrow(/--trusted-proxies: 'proxy.example' is not/)
    for (const bad of ['placement', '//evil.com', '/a b', '/a/../b'])
      expect(() => resolveEdge({'base-path': bad}), bad).toThrow(/--base-path:/)
    const edge = resolveEdge({
      'tls-cert': first.cert,
      'tls-key': first.key,
      'base-path': '/placement/',
      'trusted-proxies': '10.0.0.5, fd00::/8',
    })
    expect(edge).toMatchObject({
      scheme: 'https',
      settings: {basePath: '/placement', trustedProxies: ['10.0.0.5', 'fd00::/8']},
      warnings: [],
    })
    // placement.conf's enable_proxy_headers_parsing trusts every peer (warned); the flag overrides it.
    expect(resolveEdge({}, {trustAnyProxy: true})).toMatchObject({
      settings: {trustedProxies: 'any'},
      warnings: [expect.stringMatching(/--trusted-proxies/)],
    })
    expect(resolveEdge({'trusted-proxies': ''}, {trustAnyProxy: true})).toMatchObject({settings: {}, warnings: []})
    expect(resolveEdge({})).toEqual({settings: {}, scheme: 'http', warnings: []})
  })

  describe('a daemon serving HTTPS', () => {
    let server: RunningServer
    let certFile: string
    let keyFile: string
    beforeAll(async () => {
      certFile = write('served.pem', fs.readFileSync(first.cert))
      keyFile = write('served-key.pem', fs.readFileSync(first.key))
      server = await startServer({
        db: path.join(dir, 'p.db'),
        host: '127.0.0.1',
        port: 0,
        auth: 'noauth2',
        edge: {tls: {certFile, keyFile}},
      })
    })
    afterAll(() => server?.close())

    const fingerprint = (file: string) => new X509Certificate(fs.readFileSync(file)).fingerprint256

    /** GET / over `agent`: the status, the served certificate's fingerprint and the connection. */
    const get = (agent: https.Agent) =>
      new Promise<{status: number; fingerprint: string | undefined; socket: unknown}>((resolve, reject) => {
        https
          .get(`${server.url}/`, {agent, ca: fs.readFileSync(ca.cert)}, (res) => {
            const socket = res.socket as tls.TLSSocket
            // A reused connection shows no certificate again (undefined).
            const served = socket.getPeerX509Certificate()?.fingerprint256
            res.resume()
            res.on('end', () => resolve({status: res.statusCode!, fingerprint: served, socket}))
          })
          .on('error', reject)
      })

    it('answers over HTTPS at its https URL, with TLS 1.2 at least', async () => {
      expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/)
      const agent = new https.Agent({keepAlive: false})
      expect(await get(agent)).toMatchObject({status: 200, fingerprint: fingerprint(first.cert)})
      const port = Number(new URL(server.url).port)
      const old = await new Promise<string>((resolve) => {
        const c = tls.connect(
          {
            port,
            host: '127.0.0.1',
            ca: fs.readFileSync(ca.cert),
            maxVersion: 'TLSv1.1',
            minVersion: 'TLSv1',
            ciphers: 'DEFAULT@SECLEVEL=0',
          },
          () => {
            c.destroy()
            resolve(`connected with ${c.getProtocol()}`)
          },
        )
        c.on('error', (err: NodeJS.ErrnoException) => resolve(`refused: ${err.code}`))
      })
      expect(old).toMatch(/^refused/)
    })

    it('reloadTls() serves new files to new connections, keeps those open, and keeps the old pair when the new one is bad', async () => {
      expect(server.reloadTls()).toEqual({changed: false})
      const kept = new https.Agent({keepAlive: true, maxSockets: 1})
      const before = await get(kept)
      expect(before.fingerprint).toBe(fingerprint(first.cert))

      fs.copyFileSync(second.cert, certFile)
      fs.copyFileSync(second.key, keyFile)
      expect(server.reloadTls()).toEqual({changed: true})
      const open = await get(kept)
      expect(open.socket).toBe(before.socket) // the same connection, not dropped
      expect(open.status).toBe(200)
      expect((await get(new https.Agent({keepAlive: false}))).fingerprint).toBe(fingerprint(second.cert))
      kept.destroy()

      // Half a rotation (the new certificate, the old key): refused, naming the key; the pair served stays.
      fs.copyFileSync(first.cert, certFile)
      expect(() => server.reloadTls()).toThrow(new RegExp(`key ${keyFile} is not the key of the certificate in ${certFile}`))
      fs.writeFileSync(keyFile, 'not a key\n')
      expect(() => server.reloadTls()).toThrow(new RegExp(`key ${keyFile} is not PEM`))
      fs.rmSync(certFile)
      expect(() => server.reloadTls()).toThrow(new RegExp(`certificate ${certFile} cannot be read`))
      expect((await get(new https.Agent({keepAlive: false}))).fingerprint).toBe(fingerprint(second.cert))

      // The rotation completed: taken.
      fs.copyFileSync(first.cert, certFile)
      fs.copyFileSync(first.key, keyFile)
      expect(server.reloadTls()).toEqual({changed: true})
      expect((await get(new https.Agent({keepAlive: false}))).fingerprint).toBe(fingerprint(first.cert))
    })
  })

  it('a plain HTTP daemon has nothing to reload', async () => {
    const server = await startServer({db: path.join(dir, 'plain.db'), host: '127.0.0.1', port: 0, auth: 'noauth2'})
    try {
      expect(server.url).toMatch(/^http:/)
      expect(server.reloadTls()).toEqual({changed: false})
    } finally {
      await server.close()
    }
  })
})
