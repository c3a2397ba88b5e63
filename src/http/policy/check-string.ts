/**
 * oslo.policy's check strings, parsed and evaluated as oslo.policy does for the checks
 * Placement's policies use: `@` (always), `!` (never), `role:NAME` (case-insensitive), `rule:NAME`,
 * any `KEY:VALUE` against the credentials (`project_id:%(project_id)s`, `system_scope:all`,
 * a `%(name)s` taken from the target), joined with `and`, `or`, `not` and parentheses
 * (`not` binds tightest, then `and`, then `or`). An empty string allows.
 */

export type Check =
  | {kind: 'true'}
  | {kind: 'false'}
  | {kind: 'rule'; name: string}
  | {kind: 'role'; role: string}
  | {kind: 'generic'; key: string; match: string}
  | {kind: 'not'; check: Check}
  | {kind: 'and'; checks: Check[]}
  | {kind: 'or'; checks: Check[]}

/** What a check is evaluated against: the caller's credentials and the action's target. */
export interface Credentials {
  roles: string[]
  project_id: string | null
  user_id: string | null
  /** 'all' for a system-scoped token. */
  system_scope: string | null
}

export class CheckStringError extends Error {}

function tokens(text: string): string[] {
  const out: string[] = []
  for (const raw of text.trim().split(/\s+/)) {
    if (!raw) continue
    // Parentheses stuck to a check ("(role:admin") are tokens of their own.
    let word = raw
    while (word.startsWith('(')) {
      out.push('(')
      word = word.slice(1)
    }
    let closing = 0
    while (word.endsWith(')')) {
      closing++
      word = word.slice(0, -1)
    }
    if (word) out.push(word)
    for (let i = 0; i < closing; i++) out.push(')')
  }
  return out
}

function atom(word: string): Check {
  if (word === '@') return {kind: 'true'}
  if (word === '!') return {kind: 'false'}
  const colon = word.indexOf(':')
  if (colon <= 0) throw new CheckStringError(`'${word}' is not a check (KIND:MATCH, @ or !)`)
  const key = word.slice(0, colon)
  const match = word.slice(colon + 1)
  if (key === 'rule') return {kind: 'rule', name: match}
  if (key === 'role') return {kind: 'role', role: match}
  return {kind: 'generic', key, match: match.replace(/^(['"])(.*)\1$/, '$2')}
}

/** Parses a check string; throws CheckStringError for what it cannot read. */
export function parseCheck(text: string): Check {
  const ts = tokens(text)
  if (ts.length === 0) return {kind: 'true'}
  let i = 0
  const peek = () => ts[i]?.toLowerCase()
  const or = (): Check => {
    const checks = [and()]
    while (peek() === 'or') {
      i++
      checks.push(and())
    }
    return checks.length === 1 ? checks[0] : {kind: 'or', checks}
  }
  const and = (): Check => {
    const checks = [not()]
    while (peek() === 'and') {
      i++
      checks.push(not())
    }
    return checks.length === 1 ? checks[0] : {kind: 'and', checks}
  }
  const not = (): Check => {
    if (peek() === 'not') {
      i++
      return {kind: 'not', check: not()}
    }
    const t = ts[i++]
    if (t === undefined) throw new CheckStringError(`'${text}' ends too soon`)
    if (t === '(') {
      const inner = or()
      if (ts[i++] !== ')') throw new CheckStringError(`'${text}' has an unclosed parenthesis`)
      return inner
    }
    if (t === ')' || ['and', 'or'].includes(t.toLowerCase())) throw new CheckStringError(`'${text}': unexpected '${t}'`)
    return atom(t)
  }
  const out = or()
  if (i < ts.length) throw new CheckStringError(`'${text}': unexpected '${ts[i]}'`)
  return out
}

/** Python's str() of a credential or target value, as oslo.policy compares them. */
const pyStr = (v: unknown): string => (v === null || v === undefined ? 'None' : v === true ? 'True' : v === false ? 'False' : String(v))

/** `%(name)s` replaced from the target; undefined when the target lacks a name (the check fails). */
function substitute(match: string, target: Record<string, unknown>): string | undefined {
  let missing = false
  const out = match.replace(/%\((\w+)\)s/g, (_m, name: string) => {
    if (!(name in target)) missing = true
    return pyStr(target[name])
  })
  return missing ? undefined : out
}

export function evaluate(
  c: Check,
  target: Record<string, unknown>,
  creds: Credentials,
  rule: (name: string) => Check | undefined,
  depth = 0,
): boolean {
  if (depth > 50) return false // a rule that refers to itself
  switch (c.kind) {
    case 'true':
      return true
    case 'false':
      return false
    case 'not':
      return !evaluate(c.check, target, creds, rule, depth)
    case 'and':
      return c.checks.every((x) => evaluate(x, target, creds, rule, depth))
    case 'or':
      return c.checks.some((x) => evaluate(x, target, creds, rule, depth))
    case 'rule': {
      const named = rule(c.name)
      return named !== undefined && evaluate(named, target, creds, rule, depth + 1)
    }
    case 'role': {
      const want = substitute(c.role, target)
      return want !== undefined && creds.roles.some((r) => r.toLowerCase() === want.toLowerCase())
    }
    case 'generic': {
      const match = substitute(c.match, target)
      if (match === undefined) return false
      // A quoted or numeric left side is a literal, compared as it is.
      const literal =
        /^(['"])(.*)\1$/.exec(c.key)?.[2] ?? (/^-?\d+(\.\d+)?$/.test(c.key) || c.key === 'True' || c.key === 'False' ? c.key : undefined)
      if (literal !== undefined) return match === literal
      const all = creds as unknown as Record<string, unknown>
      if (!(c.key in all)) return false
      const value = all[c.key]
      return Array.isArray(value) ? value.map(pyStr).includes(match) : pyStr(value) === match
    }
  }
}
