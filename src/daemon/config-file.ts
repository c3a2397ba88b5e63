/**
 * OpenStack Placement's own configuration file (placement.conf, oslo.config's INI), read for
 * what applies to placemat, so that an operator moving from Placement points the daemon at the
 * file they already have. Options placemat does not use are ignored with a warning, never
 * misread; command-line flags override what the file says.
 */
import fs from 'node:fs'
import type {KeystoneSettings} from '../http/auth/keystone.js'
import type {PolicyOptions} from '../http/policy/policy.js'
import {ConfigFileError, parseIni} from '../store/placement-db/ini.js'

export {ConfigFileError, parseIni}

/** What the file sets, in the daemon's terms, and what it set that placemat leaves alone. */
export interface ConfigFileSettings {
  auth?: 'keystone' | 'noauth2'
  keystone?: KeystoneSettings
  policy: PolicyOptions
  corsOrigins?: string[]
  corsAllowHeaders?: string[]
  maxCandidates?: number
  randomize?: boolean
  incompleteConsumer?: {project?: string; user?: string}
  /** oslo.log's [DEFAULT] debug: debug when true, info when false (a reload reads it again). */
  logLevel?: 'debug' | 'info'
  /** [oslo_middleware] enable_proxy_headers_parsing: forwarding headers believed from any peer (edge-options.ts). */
  trustAnyProxy?: boolean
  /** [placement_database] connection, as written (SQLAlchemy's URL; database-source.ts reads it). */
  databaseConnection?: string
  warnings: string[]
}

const bool = (v: string, where: string): boolean => {
  const t = v.trim().toLowerCase()
  if (['true', 'yes', 'on', '1'].includes(t)) return true
  if (['false', 'no', 'off', '0'].includes(t)) return false
  throw new ConfigFileError(`${where}: expected true or false, not '${v}'`)
}

const int = (v: string, where: string): number => {
  if (!/^-?\d+$/.test(v.trim())) throw new ConfigFileError(`${where}: expected a whole number, not '${v}'`)
  return Number(v)
}

const list = (v: string) =>
  v
    .split(/[,\n]/)
    .map((x) => x.trim())
    .filter(Boolean)

/** Options placemat reads, by section; anything else in these sections (and other sections) is warned about. */
const KNOWN: Record<string, string[]> = {
  api: ['auth_strategy'],
  keystone_authtoken: [
    'auth_url',
    'auth_type',
    'username',
    'password',
    'project_name',
    'user_domain_name',
    'user_domain_id',
    'project_domain_name',
    'project_domain_id',
    'www_authenticate_uri',
    'auth_uri',
    'token_cache_time',
    'service_token_roles',
    'service_token_roles_required',
  ],
  oslo_policy: ['policy_file', 'enforce_scope', 'enforce_new_defaults'],
  cors: ['allowed_origin', 'allow_headers'],
  oslo_middleware: ['enable_proxy_headers_parsing'],
  placement: [
    'max_allocation_candidates',
    'randomize_allocation_candidates',
    'incomplete_consumer_project_id',
    'incomplete_consumer_user_id',
  ],
  placement_database: ['connection'],
}

/** Sections whose options do not apply to placemat at all (said once per section, not per option). */
const NOT_HERE: Record<string, string> = {
  DEFAULT: "logging and the like are placemat's own flags; debug alone is read",
}

export function readConfigFile(file: string): ConfigFileSettings {
  let text: string
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (err) {
    throw new ConfigFileError(`${file}: ${(err as Error).message}`)
  }
  const ini = parseIni(text, file)
  const out: ConfigFileSettings = {policy: {}, warnings: []}
  const get = (section: string, key: string) => ini.get(section)?.get(key)
  const where = (section: string, key: string) => `${file}: [${section}] ${key}`

  for (const [name, options] of ini) {
    if (NOT_HERE[name] !== undefined) {
      const others = name === 'DEFAULT' ? [...options.keys()].filter((k) => k !== 'debug').length : options.size
      if (others) out.warnings.push(`${file}: [${name}] ignored (${NOT_HERE[name]})`)
      continue
    }
    const known = KNOWN[name]
    if (!known) {
      out.warnings.push(`${file}: [${name}] ignored (not an option placemat reads)`)
      continue
    }
    for (const key of options.keys())
      if (!known.includes(key)) out.warnings.push(`${where(name, key)} ignored (not an option placemat reads)`)
  }

  const debug = get('DEFAULT', 'debug')
  if (debug !== undefined) out.logLevel = bool(debug, where('DEFAULT', 'debug')) ? 'debug' : 'info'

  const strategy = get('api', 'auth_strategy')
  if (strategy !== undefined) {
    if (strategy !== 'keystone' && strategy !== 'noauth2')
      throw new ConfigFileError(`${where('api', 'auth_strategy')}: keystone or noauth2, not '${strategy}'`)
    out.auth = strategy
  }

  const ks = ini.get('keystone_authtoken')
  if (ks?.size) {
    const authType = ks.get('auth_type') ?? 'password'
    if (authType !== 'password')
      throw new ConfigFileError(`${where('keystone_authtoken', 'auth_type')}: only password is supported, not '${authType}'`)
    const need = (key: string) => {
      const v = ks.get(key)
      if (!v) throw new ConfigFileError(`${file}: [keystone_authtoken] needs ${key}`)
      return v
    }
    out.keystone = {
      authUrl: need('auth_url'),
      username: need('username'),
      password: need('password'),
      projectName: need('project_name'),
      userDomainName: ks.get('user_domain_name'),
      userDomainId: ks.get('user_domain_id'),
      projectDomainName: ks.get('project_domain_name'),
      projectDomainId: ks.get('project_domain_id'),
      wwwAuthenticateUri: ks.get('www_authenticate_uri') ?? ks.get('auth_uri'),
      tokenCacheSeconds:
        ks.get('token_cache_time') !== undefined
          ? int(ks.get('token_cache_time')!, where('keystone_authtoken', 'token_cache_time'))
          : undefined,
      serviceTokenRoles: ks.get('service_token_roles') !== undefined ? list(ks.get('service_token_roles')!) : undefined,
      serviceTokenRolesRequired:
        ks.get('service_token_roles_required') !== undefined
          ? bool(ks.get('service_token_roles_required')!, where('keystone_authtoken', 'service_token_roles_required'))
          : undefined,
    }
  }

  const policyFile = get('oslo_policy', 'policy_file')
  if (policyFile !== undefined) out.policy.file = policyFile
  const scope = get('oslo_policy', 'enforce_scope')
  if (scope !== undefined) out.policy.enforceScope = bool(scope, where('oslo_policy', 'enforce_scope'))
  const newDefaults = get('oslo_policy', 'enforce_new_defaults')
  if (newDefaults !== undefined) out.policy.enforceNewDefaults = bool(newDefaults, where('oslo_policy', 'enforce_new_defaults'))

  const origins = get('cors', 'allowed_origin')
  if (origins !== undefined) out.corsOrigins = list(origins)
  const headers = get('cors', 'allow_headers')
  if (headers !== undefined) out.corsAllowHeaders = list(headers)

  const max = get('placement', 'max_allocation_candidates')
  if (max !== undefined) out.maxCandidates = int(max, where('placement', 'max_allocation_candidates'))
  const randomize = get('placement', 'randomize_allocation_candidates')
  if (randomize !== undefined) out.randomize = bool(randomize, where('placement', 'randomize_allocation_candidates'))
  const project = get('placement', 'incomplete_consumer_project_id')
  const user = get('placement', 'incomplete_consumer_user_id')
  if (project !== undefined || user !== undefined) out.incompleteConsumer = {project, user}
  const proxyHeaders = get('oslo_middleware', 'enable_proxy_headers_parsing')
  if (proxyHeaders !== undefined) out.trustAnyProxy = bool(proxyHeaders, where('oslo_middleware', 'enable_proxy_headers_parsing'))
  const connection = get('placement_database', 'connection')
  if (connection !== undefined) out.databaseConnection = connection
  return out
}
