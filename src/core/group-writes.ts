/**
 * Making, changing and deleting placement groups. A group's members may already hold
 * allocations: creating a group or adding members is refused when the members break its
 * (hard) rule where they stand, unless the write allows it.
 */
import {badRequest, conflict, notFound, ErrorCode} from './errors.js'
import {GROUP_LEVELS, GROUP_POLICIES, refuseNewBreaches, type Group, type GroupLevel, type GroupPolicy, type GroupRule} from './groups.js'
import type {Changes} from './state/changes.js'
import type {State} from './state/state.js'

export interface GroupSpec {
  name: string
  policy: GroupPolicy
  level: GroupLevel
  maxPer?: number
  maxSkew?: number
  soft?: boolean
  members?: string[]
}

/** The pattern of a group's name, in the one place it is decided (the API's schemas take it from here). */
export const GROUP_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$'

/** The same rule in words, for messages and help. */
export const GROUP_NAME_RULE = '1-200 letters, digits and . _ : -, starting with a letter or digit'

const NAME = new RegExp(GROUP_NAME_PATTERN)

/** A name a group may have: GROUP_NAME_RULE. */
export const isGroupName = (name: unknown): name is string => typeof name === 'string' && NAME.test(name)

/** The rule a spec gives, its numbers checked against its policy. */
export function ruleOf(spec: Omit<GroupSpec, 'name' | 'members'>): GroupRule {
  if (!GROUP_POLICIES.includes(spec.policy)) throw badRequest(`Unknown policy '${spec.policy}': expected ${GROUP_POLICIES.join(', ')}.`)
  if (!GROUP_LEVELS.includes(spec.level)) throw badRequest(`Unknown level '${spec.level}': expected ${GROUP_LEVELS.join(', ')}.`)
  const count = (v: number | undefined, what: string) => {
    if (v === undefined || !Number.isInteger(v) || v < 1)
      throw badRequest(`A ${spec.policy} group needs ${what}, a whole number of at least 1.`)
    return v
  }
  const rule: GroupRule = {policy: spec.policy, level: spec.level, soft: spec.soft === true}
  if (spec.policy === 'max-per') rule.maxPer = count(spec.maxPer, 'max_per')
  else if (spec.maxPer !== undefined) throw badRequest(`max_per applies only to a max-per group.`)
  if (spec.policy === 'spread') rule.maxSkew = count(spec.maxSkew, 'max_skew')
  else if (spec.maxSkew !== undefined) throw badRequest(`max_skew applies only to a spread group.`)
  return rule
}

export function requireGroup(s: State, name: string): Group {
  const g = s.groups.get(name)
  if (!g) throw notFound(`No placement group named '${name}'.`)
  return g
}

const checkGeneration = (g: Group, generation: number | undefined) => {
  if (generation !== undefined && generation !== g.generation) {
    throw conflict(`group ${g.name} generation conflict: expected ${generation}, found ${g.generation}`, ErrorCode.CONCURRENT_UPDATE)
  }
}

export function createGroup(s: State, now: number, spec: GroupSpec, opts: {allowViolations?: boolean} = {}): Group {
  if (!isGroupName(spec.name)) {
    throw badRequest(`Invalid group name '${spec.name}': ${GROUP_NAME_RULE}.`)
  }
  if (s.groups.has(spec.name)) throw conflict(`A placement group named '${spec.name}' exists.`, ErrorCode.DUPLICATE_NAME)
  const rule = ruleOf(spec)
  const members = [...new Set(spec.members ?? [])]
  const g: Group = {...rule, name: spec.name, members: new Set(), generation: 1, createdAt: now, updatedAt: now}
  // Checked as an empty group that these members join.
  s.groups.set(g.name, g)
  try {
    if (members.length) refuseNewBreaches(s, {joins: new Map([[g.name, members]])}, opts.allowViolations)
  } finally {
    s.groups.delete(g.name)
  }
  const made = {...g, members: new Set(members)}
  s.setGroup(made)
  return made
}

export function deleteGroup(s: State, name: string, generation?: number): void {
  const g = requireGroup(s, name)
  checkGeneration(g, generation)
  s.removeGroup(name)
}

/** Adds members (already there: no change); refused when they break the rule where they stand. */
export function addMembers(
  s: State,
  now: number,
  name: string,
  consumers: string[],
  opts: {generation?: number; allowViolations?: boolean} = {},
): Group {
  const g = requireGroup(s, name)
  checkGeneration(g, opts.generation)
  const joining = [...new Set(consumers)].filter((c) => !g.members.has(c))
  if (joining.length === 0) return g
  refuseNewBreaches(s, {joins: new Map([[name, joining]])}, opts.allowViolations)
  const next: Group = {...g, members: new Set([...g.members, ...joining]), generation: g.generation + 1, updatedAt: now}
  s.setGroup(next)
  return next
}

/** Removes members. Never refused: a spread it unbalances is reported by audit. */
export function removeMembers(s: State, now: number, name: string, consumers: string[], opts: {generation?: number} = {}): Group {
  const g = requireGroup(s, name)
  checkGeneration(g, opts.generation)
  const leaving = new Set(consumers)
  if (![...leaving].some((c) => g.members.has(c))) return g
  const next: Group = {...g, members: new Set([...g.members].filter((c) => !leaving.has(c))), generation: g.generation + 1, updatedAt: now}
  s.setGroup(next)
  return next
}

/**
 * Whether a consumer the change touches is a placement group's member (whose rules read other
 * consumers): such a write depends on more than the records it changes.
 */
export function inAnyGroup(s: State, ch: Changes): boolean {
  if (s.groups.size === 0) return false
  for (const g of s.groups.values()) {
    for (const c of ch.consumers) if (g.members.has(c)) return true
    for (const c of ch.deletedConsumers) if (g.members.has(c)) return true
  }
  return false
}
