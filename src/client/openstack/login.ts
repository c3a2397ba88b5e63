/**
 * One login to Keystone (POST /v3/auth/tokens) for a cloud's credentials: password,
 * application credential or token, scoped to a project, to the system, or by the application
 * credential itself. The command line's session and the daemon's own service login both use it.
 */
import {unreachable} from '../client.js'
import {fetchResent} from '../resend.js'
import type {CloudAuth} from './clouds.js'

/** Keystone refused the credentials, or the token given is no longer good (exit 10). */
export class AuthenticationError extends Error {}

export interface CatalogEntry {
  type: string
  endpoints: Array<{interface: string; region?: string; region_id?: string; url: string}>
}

export interface Login {
  token: string
  /** ms since the epoch. */
  expires: number
  catalog: CatalogEntry[]
}

/** Keystone's v3 root, whether the URL names it or not. */
export const v3 = (url: string) => url.replace(/\/+$/, '').replace(/\/v3$/, '') + '/v3'

const domain = (name?: string, id?: string) => (id ? {id} : name ? {name} : {id: 'default'})

function identity(a: CloudAuth): Record<string, unknown> {
  switch (a.authType) {
    case 'password': {
      if (!a.password)
        throw new AuthenticationError(`cloud ${a.cloud}: no password (OS_PASSWORD, or auth.password in clouds.yaml/secure.yaml)`)
      const user = a.userId
        ? {id: a.userId, password: a.password}
        : {name: a.username, password: a.password, domain: domain(a.userDomainName, a.userDomainId)}
      return {methods: ['password'], password: {user}}
    }
    case 'v3applicationcredential': {
      if (!a.applicationCredentialSecret) throw new AuthenticationError(`cloud ${a.cloud}: no application credential secret`)
      const cred = a.applicationCredentialId
        ? {id: a.applicationCredentialId, secret: a.applicationCredentialSecret}
        : {
            name: a.applicationCredentialName,
            secret: a.applicationCredentialSecret,
            user: {name: a.username, domain: domain(a.userDomainName, a.userDomainId)},
          }
      return {methods: ['application_credential'], application_credential: cred}
    }
    default:
      return {methods: ['token'], token: {id: a.token}}
  }
}

function scope(a: CloudAuth): Record<string, unknown> | undefined {
  if (a.authType === 'v3applicationcredential') return undefined // an application credential carries its own
  if (a.systemScope) return {system: {[a.systemScope]: true}}
  if (a.projectId) return {project: {id: a.projectId}}
  if (a.projectName) return {project: {name: a.projectName, domain: domain(a.projectDomainName, a.projectDomainId)}}
  return undefined
}

/**
 * A token for `a`. Throws AuthenticationError when Keystone refuses (or answers without a
 * token), UnreachableError when it cannot be reached. `catalog: false` asks for none.
 */
export async function logIn(a: CloudAuth, opts: {catalog?: boolean; timeoutMs?: number} = {}): Promise<Login> {
  if (!a.authUrl) throw new AuthenticationError(`cloud ${a.cloud}: no auth_url (OS_AUTH_URL)`)
  const s = scope(a)
  let res: Response
  try {
    res = await fetchResent(`${v3(a.authUrl)}/auth/tokens${opts.catalog === false ? '?nocatalog' : ''}`, {
      method: 'POST',
      headers: {'content-type': 'application/json', accept: 'application/json'},
      body: JSON.stringify({auth: {identity: identity(a), ...(s ? {scope: s} : {})}}),
      timeoutMs: opts.timeoutMs,
    })
  } catch (err) {
    throw unreachable(`Keystone at ${a.authUrl}`, err)
  }
  if (res.status === 401) {
    await res.body?.cancel()
    const who =
      a.authType === 'v3applicationcredential'
        ? `application credential ${a.applicationCredentialId ?? a.applicationCredentialName}`
        : `user ${a.username ?? a.userId}`
    throw new AuthenticationError(
      `Keystone at ${a.authUrl} refused the credentials of ${who} (cloud ${a.cloud}): wrong password, or no such user or project`,
    )
  }
  if (!res.ok) throw new AuthenticationError(`Keystone at ${a.authUrl} answered ${res.status}: ${(await res.text()).slice(0, 300)}`)
  const token = res.headers.get('x-subject-token')
  const body = (await res.json()) as {token: {expires_at: string; catalog?: CatalogEntry[]}}
  if (!token) throw new AuthenticationError(`Keystone at ${a.authUrl} answered without a token`)
  return {token, expires: Date.parse(body.token.expires_at), catalog: body.token.catalog ?? []}
}
