/**
 * Logging in to Keystone for the command line, as keystoneauth does: a token for the cloud's
 * credentials (password, application credential or token), the placement endpoint from the
 * token's catalog (by region and interface, unless one is given), and the token kept in an
 * owner-only cache file until shortly before it expires, so that a shell loop of commands does
 * not log in every time.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {AuthenticationError, logIn, type CatalogEntry} from './login.js'

export {AuthenticationError}
import type {CloudAuth} from './clouds.js'

/** node:crypto, loaded at its first use: most commands never hash, and loading it is some 10 ms of a start. */
const crypto = () => process.getBuiltinModule('node:crypto')

export interface Session {
  token: string
  endpoint: string
  /** ms since the epoch; Infinity for a token given as it is. */
  expires: number
}

/** The catalog has no placement endpoint for the region and interface (exit 5). */
export class NoEndpointError extends Error {}

/** A cached token is used until this long before it expires. */
const MARGIN_MS = 5 * 60_000

export class KeystoneSession {
  private current: Session | undefined
  /** A login under way: requests made at once (a command's calls in parallel) share it. */
  private loggingIn: Promise<Session> | null = null

  constructor(
    readonly auth: CloudAuth,
    private readonly cacheDir = path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'placemat', 'tokens'),
  ) {}

  /** A good token and the endpoint: the cached one when it has time left, else a new login. */
  async session(): Promise<Session> {
    if (this.current && this.current.expires - MARGIN_MS > Date.now()) return this.current
    const given = this.givenToken()
    if (given) return (this.current = given)
    const cached = this.readCache()
    if (cached) return (this.current = cached)
    return this.renew()
  }

  /** Logs in again (after a 401: the token was revoked, or expired early). */
  async renew(): Promise<Session> {
    if (this.givenToken()) {
      throw new AuthenticationError(`the token given (OS_TOKEN or the cloud's) was refused: it is expired or revoked`)
    }
    this.loggingIn ??= this.logIn()
      .then((session) => {
        this.current = session
        this.writeCache(session)
        return session
      })
      .finally(() => {
        this.loggingIn = null
      })
    return this.loggingIn
  }

  /** admin_token / none / a token with its endpoint: no Keystone to ask. */
  private givenToken(): Session | undefined {
    const a = this.auth
    if (a.authType === 'admin_token' || a.authType === 'none') {
      if (!a.endpoint) throw new AuthenticationError(`auth type ${a.authType} needs the placement endpoint (OS_ENDPOINT, or --url)`)
      return {token: a.token ?? '', endpoint: a.endpoint, expires: Infinity}
    }
    if (a.authType === 'token' && a.endpoint && a.token) return {token: a.token, endpoint: a.endpoint, expires: Infinity}
    return undefined
  }

  private async logIn(): Promise<Session> {
    const t = await logIn(this.auth)
    return {token: t.token, endpoint: this.auth.endpoint ?? this.endpointIn(t.catalog), expires: t.expires}
  }

  /** The placement endpoint of the catalog for the cloud's region and interface. */
  private endpointIn(catalog: CatalogEntry[]): string {
    const a = this.auth
    const service = catalog.find((s) => s.type === 'placement')
    const fits = (service?.endpoints ?? []).filter(
      (e) => e.interface === a.interface && (!a.region || (e.region_id ?? e.region) === a.region),
    )
    if (!fits.length) {
      const where = `interface ${a.interface}${a.region ? `, region ${a.region}` : ''}`
      throw new NoEndpointError(
        service
          ? `the catalog has no placement endpoint for ${where} (it has ${service.endpoints.map((e) => `${e.interface}${e.region_id ? `@${e.region_id}` : ''}`).join(', ')})`
          : `the catalog of cloud ${a.cloud} has no placement service (${where}); give the endpoint with --url or OS_ENDPOINT`,
      )
    }
    return fits[0].url
  }

  // ---- the token cache ----------------------------------------------------------------------

  /**
   * One file per set of credentials, secrets included (as keystoneauth's cache id hashes them):
   * a token logged in with one password is never handed to a command given another. The name
   * is a digest, so no secret is in it.
   */
  private cacheFile(): string {
    const a = this.auth
    const key = [
      a.authUrl,
      a.authType,
      a.username,
      a.userId,
      a.userDomainName,
      a.userDomainId,
      a.projectName,
      a.projectId,
      a.projectDomainName,
      a.projectDomainId,
      a.systemScope,
      a.applicationCredentialId,
      a.applicationCredentialName,
      a.region,
      a.interface,
      a.endpoint,
    ]
    const secrets = [a.password, a.applicationCredentialSecret, a.token].map((v) =>
      v === undefined ? null : crypto().createHash('sha256').update(v).digest('hex'),
    )
    const digest = crypto()
      .createHash('sha256')
      .update(JSON.stringify([...key, ...secrets]))
      .digest('hex')
    return path.join(this.cacheDir, `${digest}.json`)
  }

  private readCache(): Session | undefined {
    try {
      const s = JSON.parse(fs.readFileSync(this.cacheFile(), 'utf8')) as Session
      if (typeof s.token === 'string' && typeof s.endpoint === 'string' && s.expires - MARGIN_MS > Date.now()) return s
    } catch {
      // no cache yet, or one that cannot be read: log in
    }
    return undefined
  }

  private writeCache(s: Session): void {
    try {
      fs.mkdirSync(this.cacheDir, {recursive: true, mode: 0o700})
      const file = this.cacheFile()
      const tmp = `${file}.${process.pid}.tmp`
      fs.writeFileSync(tmp, JSON.stringify(s), {mode: 0o600})
      fs.renameSync(tmp, file)
    } catch {
      // a cache that cannot be written costs a login next time, nothing more
    }
  }
}
