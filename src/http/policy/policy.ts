/**
 * Placement's policy as oslo.policy enforces it: the defaults of one generation (15.0.0's
 * unless told 8.0.0; deprecated ones or'ed in unless new defaults are enforced), an operator's policy file (oslo.policy YAML or JSON: rule
 * name -> check string) over them, and, when scope is enforced, a token whose scope the rule
 * does not list refused outright. Unless told, both are enforced with 15.0.0's defaults (as
 * Placement 2026.1 runs them, on oslo.policy 4.4.0 and later) and neither with 8.0.0's (as
 * Placement 8.0.0 ran them, on the oslo.policy of its time).
 */
import fs from 'node:fs'
import {yaml} from '../../core/yaml.js'
import {parseCheck, evaluate, CheckStringError, type Check, type Credentials} from './check-string.js'
import {defaultRules, type PolicyGeneration, type RuleDefault} from './defaults.js'

export type {Credentials}

export interface PolicyOptions {
  /** Whose default rules: Placement 15.0.0's (the default) or 8.0.0's. */
  defaults?: PolicyGeneration
  /** oslo.policy's policy_file. */
  file?: string
  /** oslo.policy's enforce_new_defaults: the secure-RBAC defaults alone (unset: the generation's, see enforcement). */
  enforceNewDefaults?: boolean
  /** oslo.policy's enforce_scope: a token of a scope the rule does not list is refused (unset: the generation's). */
  enforceScope?: boolean
}

/**
 * What is enforced: what the options say, else what the generation's release ran with. 15.0.0's
 * defaults are Placement 2026.1's, whose oslo.policy (4.4.0 and later) enforces new defaults
 * and scope; 8.0.0's are a Zed-era cloud's, whose oslo.policy enforced neither (its admins hold
 * project-scoped tokens with role admin, which only the deprecated defaults let in).
 */
export function enforcement(options: PolicyOptions): {enforceNewDefaults: boolean; enforceScope: boolean} {
  const byDefault = (options.defaults ?? '15.0.0') === '15.0.0'
  return {enforceNewDefaults: options.enforceNewDefaults ?? byDefault, enforceScope: options.enforceScope ?? byDefault}
}

/** The rules of an oslo.policy file: a mapping of rule name to check string. */
function readPolicyFile(file: string): Record<string, string> {
  let data: unknown
  try {
    data = yaml().parse(fs.readFileSync(file, 'utf8'))
  } catch (err) {
    throw new Error(`policy file ${file}: ${(err as Error).message.split('\n')[0]}`)
  }
  if (data === null || data === undefined) return {}
  if (typeof data !== 'object' || Array.isArray(data))
    throw new Error(`policy file ${file}: expected a mapping of rule names to check strings`)
  const out: Record<string, string> = {}
  for (const [name, check] of Object.entries(data)) {
    if (typeof check !== 'string')
      throw new Error(`policy file ${file}: rule ${name}: expected a check string, not ${JSON.stringify(check)}`)
    out[name] = check
  }
  return out
}

export class Policy {
  private rules = new Map<string, Check>()
  /** Each rule's check string as enforced (a deprecated default or'ed in), to tell what a reload changed. */
  private texts = new Map<string, string>()
  private readonly defaults: Record<string, RuleDefault>

  private readonly enforced: {enforceNewDefaults: boolean; enforceScope: boolean}

  private constructor(private readonly options: PolicyOptions) {
    this.defaults = defaultRules(options.defaults ?? '15.0.0')
    this.enforced = enforcement(options)
  }

  /** Throws (naming the file and rule) for a file that cannot be read or a check that cannot be parsed. */
  static load(options: PolicyOptions = {}): Policy {
    const p = new Policy(options)
    const overrides = options.file ? readPolicyFile(options.file) : {}
    const parse = (name: string, text: string) => {
      try {
        return parseCheck(text)
      } catch (err) {
        if (err instanceof CheckStringError) throw new Error(`policy rule ${name}: ${err.message}`)
        throw err
      }
    }
    for (const [name, d] of Object.entries(p.defaults)) {
      if (name in overrides) continue
      const check = parse(name, d.check)
      // oslo.policy: an old default still allows what it allowed, until new defaults are enforced.
      const orDeprecated = d.deprecated && !p.enforced.enforceNewDefaults
      p.rules.set(name, orDeprecated ? {kind: 'or', checks: [check, parse(name, d.deprecated!)]} : check)
      p.texts.set(name, orDeprecated ? `(${d.check}) or (${d.deprecated})` : d.check)
    }
    for (const [name, text] of Object.entries(overrides)) {
      p.rules.set(name, parse(name, text))
      p.texts.set(name, text)
    }
    return p
  }

  /**
   * Reads the policy file again (SIGHUP) and enforces it from the next request on; the rules
   * whose check changed are returned. A file that cannot be read or parsed throws, naming it,
   * and the rules in force stay as they were.
   */
  reload(): string[] {
    const next = Policy.load(this.options)
    const names = new Set([...this.texts.keys(), ...next.texts.keys()])
    const changed = [...names].filter((n) => this.texts.get(n) !== next.texts.get(n)).sort()
    this.rules = next.rules
    this.texts = next.texts
    return changed
  }

  /** Rules the file sets that Placement and placemat do not define (usable through rule:NAME). */
  static unknownRules(file: string, defaults: PolicyGeneration = '15.0.0'): string[] {
    const known = defaultRules(defaults)
    return Object.keys(readPolicyFile(file)).filter((n) => !(n in known))
  }

  /** Whether new defaults and scope are enforced (the options, else the generation's; see enforcement). */
  get enforces(): {enforceNewDefaults: boolean; enforceScope: boolean} {
    return {...this.enforced}
  }

  /**
   * Who the daemon's own admin token (`--auth token`) is: an admin of the scope the defaults
   * give their admins (system-wide in 8.0.0's, a project in 15.0.0's), so it passes as such
   * when scope is enforced; in 15.0.0's also of role service, whose alone POST /reshaper is
   * once new defaults are enforced (the operator's token reshapes, as `placemat reshape` does).
   */
  get localAdmin(): Credentials {
    return this.defaults.admin_api?.scope?.includes('system')
      ? {roles: ['admin', 'member', 'reader'], project_id: null, user_id: 'admin', system_scope: 'all'}
      : {roles: ['admin', 'service', 'member', 'reader'], project_id: 'admin', user_id: 'admin', system_scope: null}
  }

  /** Whether `creds` may do `action` on `target` (default target: the caller's own project and user). */
  authorize(action: string, creds: Credentials, target?: Record<string, unknown>): boolean {
    const scopes = this.defaults[action]?.scope
    if (this.enforced.enforceScope && scopes) {
      const tokenScope = creds.system_scope === 'all' ? 'system' : creds.project_id ? 'project' : undefined
      if (tokenScope === undefined || !scopes.includes(tokenScope)) return false
    }
    const rule = this.rules.get(action)
    if (!rule) return false
    return evaluate(rule, target ?? {project_id: creds.project_id, user_id: creds.user_id}, creds, (n) => this.rules.get(n))
  }
}
