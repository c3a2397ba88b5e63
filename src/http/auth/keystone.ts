/**
 * Keystone token validation, as keystonemiddleware's auth_token does it: the daemon logs in with
 * its own service credentials (password, scoped to its service project), then asks Keystone
 * about each token it is shown (GET /v3/auth/tokens with X-Subject-Token). A valid token gives
 * its user, project, roles and system scope; an invalid, expired or revoked one is a 401.
 * Answers are cached for a bounded time (token_cache_time, and never past the token's expiry),
 * so a request does not wait on Keystone each time.
 */
import {fetchResent} from '../../client/resend.js'
import type {CloudAuth} from '../../client/openstack/clouds.js'
import {logIn, v3} from '../../client/openstack/login.js'
import type {Credentials} from '../policy/check-string.js'

export interface KeystoneSettings {
  /** Keystone's identity endpoint ([keystone_authtoken] auth_url). */
  authUrl: string
  username: string
  password: string
  projectName: string
  userDomainName?: string
  userDomainId?: string
  projectDomainName?: string
  projectDomainId?: string
  /** What a 401 tells clients to authenticate against (www_authenticate_uri; default auth_url). */
  wwwAuthenticateUri?: string
  /** Seconds a validated token is trusted without asking Keystone again (token_cache_time, default 300). */
  tokenCacheSeconds?: number
  /** The largest number of validated tokens kept. */
  cacheSize?: number
  /** Roles that make an X-Service-Token a service's (service_token_roles, default service). */
  serviceTokenRoles?: string[]
  /** Refuse an X-Service-Token without those roles (service_token_roles_required, default false). */
  serviceTokenRolesRequired?: boolean
}

/** Keystone cannot be reached, or refused the daemon's own credentials: a 503, not the client's fault. */
export class KeystoneUnavailable extends Error {}

interface TokenBody {
  token: {
    expires_at: string
    user?: {id: string}
    project?: {id: string}
    system?: {all?: boolean}
    roles?: Array<{name: string}>
  }
}

export class KeystoneValidator {
  private serviceToken: {value: string; expires: number} | undefined
  private login: Promise<string> | undefined
  /** token -> credentials (or null: refused) until `until`; insertion order is age. */
  private readonly cache = new Map<string, {creds: Credentials | null; until: number}>()
  /** One question to Keystone per token at a time. */
  private readonly inFlight = new Map<string, Promise<Credentials | null>>()

  constructor(readonly settings: KeystoneSettings) {}

  get wwwAuthenticate(): string {
    return `Keystone uri="${this.settings.wwwAuthenticateUri ?? this.settings.authUrl}"`
  }

  /**
   * The caller a token stands for, or null when Keystone says it is not valid (now). With a
   * service token (X-Service-Token, as nova sends one beside a user's token) of a service role,
   * a user token that expired while the service worked on its behalf is still taken, as
   * keystonemiddleware does; a service token that is not valid refuses the request.
   */
  async validate(token: string, serviceToken?: string): Promise<Credentials | null> {
    if (serviceToken === undefined) return this.cached(token, false)
    const service = await this.cached(serviceToken, false)
    if (!service) return null
    const roles = (this.settings.serviceTokenRoles ?? ['service']).map((r) => r.toLowerCase())
    const isService = service.roles.some((r) => roles.includes(r.toLowerCase()))
    if (!isService && this.settings.serviceTokenRolesRequired) return null
    return (await this.cached(token, false)) ?? (isService ? this.cached(token, true) : null)
  }

  private cached(token: string, allowExpired: boolean): Promise<Credentials | null> {
    const key = allowExpired ? `expired:${token}` : token
    const now = Date.now()
    const hit = this.cache.get(key)
    if (hit && hit.until > now) return Promise.resolve(hit.creds)
    if (hit) this.cache.delete(key)
    let pending = this.inFlight.get(key)
    if (!pending) {
      pending = this.ask(token, allowExpired).finally(() => this.inFlight.delete(key))
      this.inFlight.set(key, pending)
    }
    return pending
  }

  private async ask(token: string, allowExpired: boolean, retried = false): Promise<Credentials | null> {
    const service = await this.serviceTokenValue()
    const key = allowExpired ? `expired:${token}` : token
    let res: Response
    try {
      res = await fetchResent(`${v3(this.settings.authUrl)}/auth/tokens?nocatalog${allowExpired ? '&allow_expired=1' : ''}`, {
        timeoutMs: 10_000,
        headers: {'x-auth-token': service, 'x-subject-token': token, accept: 'application/json'},
      })
    } catch (err) {
      throw new KeystoneUnavailable(`Keystone at ${this.settings.authUrl} cannot be reached: ${(err as Error).message}`)
    }
    if (res.status === 401 && !retried) {
      // Our own token expired or was revoked: log in again, once.
      this.serviceToken = undefined
      return this.ask(token, allowExpired, true)
    }
    if (res.status === 404 || res.status === 401 || res.status === 403) {
      await res.body?.cancel()
      this.remember(key, null, Date.now() + Math.min(30, this.cacheSeconds) * 1000)
      return null
    }
    if (!res.ok) throw new KeystoneUnavailable(`Keystone answered ${res.status} validating a token`)
    const body = (await res.json()) as TokenBody
    const t = body.token
    const expires = Date.parse(t.expires_at)
    if (!(expires > Date.now()) && !allowExpired) return null
    const creds: Credentials = {
      roles: (t.roles ?? []).map((r) => r.name),
      project_id: t.project?.id ?? null,
      user_id: t.user?.id ?? null,
      system_scope: t.system?.all ? 'all' : null,
    }
    // An expired token taken for a service is asked about again each time the cache lets go.
    this.remember(
      key,
      creds,
      allowExpired ? Date.now() + Math.min(30, this.cacheSeconds) * 1000 : Math.min(expires, Date.now() + this.cacheSeconds * 1000),
    )
    return creds
  }

  private get cacheSeconds(): number {
    return this.settings.tokenCacheSeconds ?? 300
  }

  private remember(token: string, creds: Credentials | null, until: number): void {
    const max = this.settings.cacheSize ?? 10_000
    if (this.cache.size >= max) this.cache.delete(this.cache.keys().next().value!)
    this.cache.set(token, {creds, until})
  }

  /** The daemon's own token, logged in for again a minute before it expires. */
  private async serviceTokenValue(): Promise<string> {
    const t = this.serviceToken
    if (t && t.expires - 60_000 > Date.now()) return t.value
    this.login ??= this.logIn().finally(() => (this.login = undefined))
    return this.login
  }

  private async logIn(): Promise<string> {
    const s = this.settings
    // The service's own credentials, logged in as the command line logs in to a cloud.
    const auth: CloudAuth = {
      cloud: 'keystone_authtoken',
      authType: 'password',
      authUrl: s.authUrl,
      username: s.username,
      password: s.password,
      userDomainName: s.userDomainId ? undefined : (s.userDomainName ?? 'Default'),
      userDomainId: s.userDomainId,
      projectName: s.projectName,
      projectDomainName: s.projectDomainId ? undefined : (s.projectDomainName ?? 'Default'),
      projectDomainId: s.projectDomainId,
      interface: 'public',
    }
    try {
      const login = await logIn(auth, {catalog: false, timeoutMs: 10_000})
      this.serviceToken = {value: login.token, expires: login.expires}
      return login.token
    } catch (err) {
      throw new KeystoneUnavailable(`the daemon's service login failed: ${(err as Error).message}`)
    }
  }
}
