/** A private certificate authority and server certificates it signs, made with openssl for a test. */
import {execFileSync} from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

export const OPENSSL = '/usr/bin/openssl'
export const opensslAvailable = fs.existsSync(OPENSSL)

const openssl = (args: string[], cwd: string) => execFileSync(OPENSSL, args, {cwd, stdio: ['ignore', 'ignore', 'pipe']})

export interface Ca {
  dir: string
  /** The authority's certificate, for clients (--os-cacert, OS_CACERT, ca-file). */
  cert: string
  key: string
}

/** A new authority in `dir` (ca.pem, ca-key.pem). */
export function makeCa(dir: string): Ca {
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'ca-key.pem',
      '-out',
      'ca.pem',
      '-days',
      '2',
      '-subj',
      '/CN=placemat test CA',
    ],
    dir,
  )
  return {dir, cert: path.join(dir, 'ca.pem'), key: path.join(dir, 'ca-key.pem')}
}

/**
 * A server certificate the authority signs, for 127.0.0.1 and localhost: `NAME.pem`, `NAME-key.pem`,
 * and `NAME-both.pem` (key and certificate in one file, as haproxy takes them).
 */
export function serverCert(ca: Ca, name: string): {cert: string; key: string; both: string} {
  const dir = ca.dir
  const ext = path.join(dir, `${name}.ext`)
  fs.writeFileSync(ext, 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n')
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}-key.pem`, '-out', `${name}.csr`, '-subj', '/CN=127.0.0.1'], dir)
  openssl(
    [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca-key.pem',
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      '-extfile',
      ext,
    ],
    dir,
  )
  const cert = path.join(dir, `${name}.pem`)
  const key = path.join(dir, `${name}-key.pem`)
  const both = path.join(dir, `${name}-both.pem`)
  fs.writeFileSync(both, Buffer.concat([fs.readFileSync(cert), fs.readFileSync(key)]))
  return {cert, key, both}
}
