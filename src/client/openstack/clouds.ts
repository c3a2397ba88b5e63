/**
 * Where an OpenStack tool finds its credentials: a named cloud in clouds.yaml (with secrets
 * from secure.yaml), chosen by --os-cloud or OS_CLOUD, or else the OS_* environment variables.
 * The same files, places and names as openstacksdk and python-openstackclient.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import YAML from 'yaml'

export type AuthType = 'password' | 'v3applicationcredential' | 'token' | 'admin_token' | 'none'
export type Interface = 'public' | 'internal' | 'admin'

export interface CloudAuth {
  /** The cloud's name in clouds.yaml, or "envvars". */
  cloud: string
  authType: AuthType
  authUrl?: string
  username?: string
  userId?: string
  password?: string
  userDomainName?: string
  userDomainId?: string
  projectName?: string
  projectId?: string
  projectDomainName?: string
  projectDomainId?: string
  /** 'all' for a system-scoped token. */
  systemScope?: string
  applicationCredentialId?: string
  applicationCredentialName?: string
  applicationCredentialSecret?: string
  token?: string
  /** The placement endpoint, when not taken from the catalog. */
  endpoint?: string
  region?: string
  interface: Interface
  cacert?: string
  insecure?: boolean
  placementApiVersion?: string
}

/** A cloud that cannot be used as given (exit 2). */
export class CloudConfigError extends Error {}

/** clouds.yaml's places, first found wins (OS_CLIENT_CONFIG_FILE first). */
export function cloudFiles(env: NodeJS.ProcessEnv, name: 'clouds' | 'secure', cwd = process.cwd()): string[] {
  const home = env.HOME ?? os.homedir()
  const config = env.XDG_CONFIG_HOME ?? path.join(home, '.config')
  const own = name === 'clouds' ? env.OS_CLIENT_CONFIG_FILE : env.OS_CLIENT_SECURE_FILE
  return [own, path.join(cwd, `${name}.yaml`), path.join(config, 'openstack', `${name}.yaml`), `/etc/openstack/${name}.yaml`].filter(
    (f): f is string => Boolean(f),
  )
}

function readYaml(file: string): Record<string, any> | undefined {
  if (!fs.existsSync(file)) return undefined
  try {
    return YAML.parse(fs.readFileSync(file, 'utf8')) ?? {}
  } catch (err) {
    throw new CloudConfigError(`${file}: ${(err as Error).message.split('\n')[0]}`)
  }
}

const merge = (a: any, b: any): any => {
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const out = {...a}
    for (const [k, v] of Object.entries(b)) out[k] = merge(a[k], v)
    return out
  }
  return b ?? a
}

const truthy = (v: unknown) => v === true || (typeof v === 'string' && ['1', 'true', 'yes', 'on'].includes(v.toLowerCase()))

function normalizeType(raw: string | undefined, hasAppCred: boolean, hasToken: boolean): AuthType {
  const t = (raw ?? '').toLowerCase().replace(/^v3/, 'v3').trim()
  if (!t) return hasAppCred ? 'v3applicationcredential' : hasToken && !raw ? 'token' : 'password'
  if (['password', 'v3password', 'v2password'].includes(t)) return 'password'
  if (['v3applicationcredential', 'applicationcredential', 'application_credential'].includes(t)) return 'v3applicationcredential'
  if (['token', 'v3token', 'v2token'].includes(t)) return 'token'
  if (t === 'admin_token') return 'admin_token'
  if (['none', 'noauth', 'http_basic'].includes(t)) return 'none'
  throw new CloudConfigError(`auth type '${raw}' is not supported (password, v3applicationcredential, token, admin_token, none)`)
}

/** A named cloud of clouds.yaml (merged with secure.yaml). */
export function namedCloud(name: string, env: NodeJS.ProcessEnv, cwd?: string): CloudAuth {
  const searched = cloudFiles(env, 'clouds', cwd)
  const file = searched.find((f) => fs.existsSync(f))
  const clouds = file ? readYaml(file)?.clouds : undefined
  let c = clouds?.[name]
  if (!c) {
    const known = clouds ? Object.keys(clouds) : []
    throw new CloudConfigError(
      `no cloud named '${name}' in ${file ?? 'any clouds.yaml'}` +
        (known.length ? ` (it has ${known.join(', ')})` : ` (searched ${searched.join(', ')})`),
    )
  }
  const secureFile = cloudFiles(env, 'secure', cwd).find((f) => fs.existsSync(f))
  const secure = secureFile ? readYaml(secureFile)?.clouds?.[name] : undefined
  if (secure) c = merge(c, secure)
  const a = c.auth ?? {}
  const appCred = Boolean(a.application_credential_id || a.application_credential_name)
  return {
    cloud: name,
    authType: normalizeType(c.auth_type, appCred, Boolean(a.token)),
    authUrl: a.auth_url,
    username: a.username,
    userId: a.user_id,
    password: a.password === undefined ? undefined : String(a.password),
    userDomainName: a.user_domain_name ?? a.domain_name,
    userDomainId: a.user_domain_id ?? a.domain_id,
    projectName: a.project_name ?? a.tenant_name,
    projectId: a.project_id ?? a.tenant_id,
    projectDomainName: a.project_domain_name ?? a.domain_name,
    projectDomainId: a.project_domain_id ?? a.domain_id,
    systemScope: a.system_scope,
    applicationCredentialId: a.application_credential_id,
    applicationCredentialName: a.application_credential_name,
    applicationCredentialSecret: a.application_credential_secret === undefined ? undefined : String(a.application_credential_secret),
    token: a.token,
    endpoint: c.placement_endpoint_override ?? a.endpoint ?? c.endpoint,
    region: c.region_name,
    interface: interfaceOf(c.interface ?? c.endpoint_type),
    cacert: c.cacert,
    insecure: c.verify === false || truthy(c.insecure),
    placementApiVersion: c.placement_api_version === undefined ? undefined : String(c.placement_api_version),
  }
}

function interfaceOf(v: unknown): Interface {
  const s = String(v ?? 'public')
    .replace(/URL$/, '')
    .toLowerCase()
  if (s === 'public' || s === 'internal' || s === 'admin') return s
  throw new CloudConfigError(`interface '${v}' is not public, internal or admin`)
}

/** The OS_* variables as a cloud, or undefined when they name no way to authenticate. */
export function envCloud(env: NodeJS.ProcessEnv): CloudAuth | undefined {
  const e = (k: string) => env[k] || undefined
  if (!e('OS_AUTH_URL') && !(e('OS_TOKEN') && e('OS_ENDPOINT')) && !e('OS_AUTH_TYPE')) return undefined
  const appCred = Boolean(e('OS_APPLICATION_CREDENTIAL_ID') || e('OS_APPLICATION_CREDENTIAL_NAME'))
  const token = e('OS_TOKEN')
  return {
    cloud: 'envvars',
    authType: normalizeType(e('OS_AUTH_TYPE'), appCred, Boolean(token) && !e('OS_PASSWORD')),
    authUrl: e('OS_AUTH_URL'),
    username: e('OS_USERNAME'),
    userId: e('OS_USER_ID'),
    password: e('OS_PASSWORD'),
    userDomainName: e('OS_USER_DOMAIN_NAME') ?? e('OS_DOMAIN_NAME'),
    userDomainId: e('OS_USER_DOMAIN_ID') ?? e('OS_DOMAIN_ID'),
    projectName: e('OS_PROJECT_NAME') ?? e('OS_TENANT_NAME'),
    projectId: e('OS_PROJECT_ID') ?? e('OS_TENANT_ID'),
    projectDomainName: e('OS_PROJECT_DOMAIN_NAME') ?? e('OS_DOMAIN_NAME'),
    projectDomainId: e('OS_PROJECT_DOMAIN_ID') ?? e('OS_DOMAIN_ID'),
    systemScope: e('OS_SYSTEM_SCOPE'),
    applicationCredentialId: e('OS_APPLICATION_CREDENTIAL_ID'),
    applicationCredentialName: e('OS_APPLICATION_CREDENTIAL_NAME'),
    applicationCredentialSecret: e('OS_APPLICATION_CREDENTIAL_SECRET'),
    token,
    endpoint: e('OS_PLACEMENT_ENDPOINT') ?? e('OS_ENDPOINT'),
    region: e('OS_REGION_NAME'),
    interface: interfaceOf(e('OS_INTERFACE') ?? e('OS_ENDPOINT_TYPE')),
    cacert: e('OS_CACERT'),
    insecure: truthy(e('OS_INSECURE')),
    placementApiVersion: e('OS_PLACEMENT_API_VERSION'),
  }
}
