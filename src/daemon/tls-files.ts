/**
 * The daemon's certificate and key (--tls-cert, --tls-key): read and checked whole before they
 * are served, at start and at each reload, so a bad file is refused with its name instead of
 * failing the first client's handshake.
 */
import {X509Certificate, createPrivateKey, type KeyObject} from 'node:crypto'
import fs from 'node:fs'
import tls from 'node:tls'
import {TLS_MIN_VERSION} from '../http/app.js'

/** A certificate or key that cannot be served; the message names the file. */
export class TlsFilesError extends Error {}

export interface TlsFiles {
  certFile: string
  keyFile: string
}

/** The PEM bytes read, with what the certificate says of itself. */
export interface TlsPair {
  cert: Buffer
  key: Buffer
  /** The certificate's (the first of a chain's) end of validity. */
  notAfter: Date
}

function read(file: string, what: string, begin: RegExp, block: string): Buffer {
  let bytes: Buffer
  try {
    bytes = fs.readFileSync(file)
  } catch (err) {
    const e = err as NodeJS.ErrnoException
    throw new TlsFilesError(`the TLS ${what} ${file} cannot be read (${e.code ?? e.message})`)
  }
  if (!begin.test(bytes.toString('latin1'))) throw new TlsFilesError(`the TLS ${what} ${file} is not PEM (no ${block} block)`)
  return bytes
}

/**
 * Reads and checks the pair: each file readable and PEM, the certificate parseable, the key an
 * unencrypted private key that belongs to the certificate, and the two usable together by Node's
 * TLS. Throws a TlsFilesError naming the file at fault.
 */
export function readTlsFiles(files: TlsFiles): TlsPair {
  const cert = read(files.certFile, 'certificate', /-----BEGIN CERTIFICATE-----/, 'BEGIN CERTIFICATE')
  const key = read(files.keyFile, 'key', /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/, 'BEGIN PRIVATE KEY')
  let x509: X509Certificate
  try {
    x509 = new X509Certificate(cert)
  } catch (err) {
    throw new TlsFilesError(`the TLS certificate ${files.certFile} cannot be parsed (${(err as Error).message})`)
  }
  let privateKey: KeyObject
  try {
    privateKey = createPrivateKey(key)
  } catch (err) {
    const encrypted = /ENCRYPTED/.test(key.toString('latin1'))
    throw new TlsFilesError(
      encrypted
        ? `the TLS key ${files.keyFile} is encrypted: give the daemon an unencrypted key (owner-only), as it asks for no passphrase`
        : `the TLS key ${files.keyFile} cannot be parsed (${(err as Error).message})`,
    )
  }
  if (!x509.checkPrivateKey(privateKey))
    throw new TlsFilesError(`the TLS key ${files.keyFile} is not the key of the certificate in ${files.certFile}`)
  try {
    tls.createSecureContext({cert, key, minVersion: TLS_MIN_VERSION})
  } catch (err) {
    throw new TlsFilesError(`the TLS certificate ${files.certFile} and key ${files.keyFile} cannot be used (${(err as Error).message})`)
  }
  return {cert, key, notAfter: new Date(x509.validTo)}
}

/** A warning when the certificate is out of date (served anyway: clients decide). */
export function expiryWarning(files: TlsFiles, pair: TlsPair, now = Date.now()): string | undefined {
  return pair.notAfter.getTime() < now ? `the TLS certificate ${files.certFile} expired on ${pair.notAfter.toISOString()}` : undefined
}
