/**
 * Flags into a GET /allocation_candidates query: granular groups, member_of with rack/row/room
 * names as their aggregate uuids, providers named by name, and topology rules as member_of
 * filters (in: / !in:) so that they work against any Placement endpoint.
 */
import type {PlacementClient} from '../../client/client.js'
import type {AffinityRule} from '../../core/affinity.js'
import {canonicalUuid as canonical, isUuidLike} from '../../core/uuids.js'
import {usageError as usage} from '../failure.js'
import {resolveProviderUuid} from '../backend/provider-lookup.js'
import type {CandidateFlagValues} from './flags.js'
import {memberOfValue} from './member-of.js'
import type {Level, ResolvedRule} from './anchors.js'

export interface GranularGroup {
  suffix: string
  resources?: string
  required: string[]
  memberOf: string[]
  inTree?: string
}

const GROUP_KEY = /^(resources|required|member[_-]of|in[_-]tree)=(.*)$/

/** "SUFFIX:resources=A:1,B:2,required=T1,!T2,member_of=in:X,Y" into its parts. */
export function parseGroup(spec: string): GranularGroup {
  const colon = spec.indexOf(':')
  if (colon <= 0) throw usage(`--group ${spec}: expected SUFFIX:resources=...[,required=...][,member_of=...][,in_tree=...]`)
  const suffix = spec.slice(0, colon)
  if (!/^[a-zA-Z0-9_-]{1,64}$/.test(suffix)) throw usage(`--group ${spec}: the suffix must be 1-64 of [a-zA-Z0-9_-], not '${suffix}'`)
  const g: GranularGroup = {suffix, required: [], memberOf: []}
  const fields: Array<[string, string]> = []
  for (const token of spec.slice(colon + 1).split(',')) {
    const m = GROUP_KEY.exec(token.trim())
    if (m) fields.push([m[1].replace('-', '_'), m[2]])
    else if (fields.length) fields[fields.length - 1][1] += `,${token}`
    else throw usage(`--group ${spec}: '${token}' comes before any resources=, required=, member_of= or in_tree=`)
  }
  if (!fields.length) throw usage(`--group ${spec}: nothing after the suffix`)
  for (const [key, value] of fields) {
    if (value.trim() === '') throw usage(`--group ${spec}: ${key}= is empty`)
    if (key === 'resources') g.resources = g.resources ? `${g.resources},${value}` : value
    else if (key === 'required') g.required.push(value)
    else if (key === 'member_of') g.memberOf.push(value)
    else {
      if (g.inTree) throw usage(`--group ${spec}: in_tree given twice`)
      g.inTree = value
    }
  }
  return g
}

/**
 * A --group value with "=" is a granular request group (SUFFIX:resources=...); one without
 * names a placement group (placemat's), whose rule the candidates must keep.
 */
export const isPlacementGroupName = (spec: string) => !spec.includes('=')

/** The placement group named among the --group flags (at most one). */
export function placementGroupOf(specs: string[] = []): string | undefined {
  const names = specs.filter(isPlacementGroupName)
  if (names.length > 1) throw usage(`--group names one placement group, not ${names.length} (${names.join(', ')})`)
  return names[0]
}

/** Merges the granular --group flags by suffix. */
export function parseGroups(specs: string[] = []): GranularGroup[] {
  const out = new Map<string, GranularGroup>()
  for (const spec of specs) {
    if (isPlacementGroupName(spec)) continue
    const g = parseGroup(spec)
    const prev = out.get(g.suffix)
    if (!prev) {
      out.set(g.suffix, g)
      continue
    }
    if (g.resources) prev.resources = prev.resources ? `${prev.resources},${g.resources}` : g.resources
    prev.required.push(...g.required)
    prev.memberOf.push(...g.memberOf)
    if (g.inTree) {
      if (prev.inTree && prev.inTree !== g.inTree) throw usage(`--group ${g.suffix}: two different in_tree`)
      prev.inTree = g.inTree
    }
  }
  return [...out.values()]
}

/** The query as an ordered list of key -> values (the first appearance of a suffix orders the groups). */
export type Query = Record<string, string[]>

function add(q: Query, key: string, value: string): void {
  ;(q[key] ??= []).push(value)
}

/**
 * --resources CLASS:AMOUNT,... and osc-placement's --resource CLASS=AMOUNT (repeatable) as one
 * resources value. `CLASS=AMOUNT` typed in --resources is read the same way: the habit is strong.
 */
export function unsuffixedResources(flags: Pick<CandidateFlagValues, 'resources' | 'resource'>): string | undefined {
  const items = [...(flags.resources ? flags.resources.split(',') : []), ...(flags.resource ?? [])].map((i) => i.trim()).filter(Boolean)
  // Anything else goes as it is: Placement's own answer (400) says what is wrong with it.
  return items.length ? items.map((i) => (/^[A-Z0-9_]+=\d+$/.test(i) ? i.replace('=', ':') : i)).join(',') : undefined
}

/** The trait nova sets on a compute service that is disabled; its scheduler leaves such hosts out. */
export const DISABLED_TRAIT = 'COMPUTE_STATUS_DISABLED'

/**
 * root_required with disabled hosts left out (nova's scheduler asks the same), unless they are
 * wanted or the request already says something of the trait. Before microversion 1.35 there is
 * no root_required to say it with: the request goes as given.
 */
export function withoutDisabledHosts(rootRequired: string | undefined, includeDisabled: boolean, version: string): string | undefined {
  const [major, minor] = version.split('.').map(Number)
  const canSay = version === 'latest' || major > 1 || (major === 1 && minor >= 35)
  if (includeDisabled || !canSay || (rootRequired ?? '').split(',').some((t) => t.trim().replace(/^!/, '') === DISABLED_TRAIT))
    return rootRequired
  return rootRequired ? `${rootRequired},!${DISABLED_TRAIT}` : `!${DISABLED_TRAIT}`
}

/** GET /allocation_candidates query from the flags (provider names in in_tree resolved). */
export async function buildQuery(client: PlacementClient, flags: CandidateFlagValues): Promise<Query> {
  const q: Query = {}
  const resources = unsuffixedResources(flags)
  if (resources) add(q, 'resources', resources)
  for (const r of flags.required ?? []) add(q, 'required', r)
  for (const m of flags['member-of'] ?? []) add(q, 'member_of', memberOfValue(m))
  if (flags['in-tree']) add(q, 'in_tree', await resolveProviderUuid(client, flags['in-tree'], true))
  for (const g of parseGroups(flags.group)) {
    const s = g.suffix
    if (g.resources) add(q, `resources${s}`, g.resources)
    for (const r of g.required) add(q, `required${s}`, r)
    for (const m of g.memberOf) add(q, `member_of${s}`, memberOfValue(m))
    if (g.inTree) add(q, `in_tree${s}`, await resolveProviderUuid(client, g.inTree, true))
  }
  if (flags['group-policy']) add(q, 'group_policy', flags['group-policy'])
  for (const s of flags['same-subtree'] ?? []) add(q, 'same_subtree', s)
  const rootRequired = withoutDisabledHosts(flags['root-required'], flags['include-disabled'] === true, client.version)
  if (rootRequired) add(q, 'root_required', rootRequired)
  if (flags.limit !== undefined) add(q, 'limit', String(flags.limit))
  const hasGroup = Object.keys(q).some((k) => k.startsWith('resources') || k.startsWith('required') || k.startsWith('member_of'))
  if (!hasGroup) throw usage('say what to place: --resources CLASS:AMOUNT,... and/or --group SUFFIX:resources=...')
  return q
}

/** The suffixes of the granular groups in a query. */
export const granularSuffixes = (q: Query) => [
  ...new Set(
    Object.keys(q)
      .map((k) => /^(?:resources|required|member_of|in_tree)(.+)$/.exec(k)?.[1])
      .filter((s): s is string => !!s),
  ),
]

/** --same / --different values into rules. */
export function parseRules(flags: {same?: string[]; different?: string[]}): AffinityRule[] {
  const out: AffinityRule[] = []
  for (const relation of ['same', 'different'] as const) {
    for (const v of flags[relation] ?? []) {
      const m = /^(rack|row|room):(.+)$/.exec(v.trim())
      if (!m) throw usage(`--${relation} ${v}: expected LEVEL:CONSUMER[,CONSUMER...] with LEVEL rack, row or room`)
      for (const c of m[2]
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)) {
        if (!isUuidLike(c)) throw usage(`--${relation} ${v}: '${c}' is not a consumer uuid`)
        out.push({relation, level: m[1] as Level, consumer: canonical(c)})
      }
    }
  }
  return out
}

/** Topology node (aggregate) uuids per level: core's Placement. */

export function addRuleFilters(q: Query, rules: ResolvedRule[]): boolean {
  const unsuffixed = Boolean(q.resources?.length)
  const suffixes = granularSuffixes(q)
  let exact = unsuffixed
  for (const r of rules) {
    const nodes = r.anchor[r.level]
    if (nodes.size === 0) continue // `different` from a consumer that is nowhere: nothing to avoid
    const list = [...nodes].sort().join(',')
    if (r.relation === 'same') {
      if (unsuffixed) add(q, 'member_of', `in:${list}`)
      continue
    }
    if (unsuffixed) add(q, 'member_of', `!in:${list}`)
    for (const s of suffixes) add(q, `member_of${s}`, `!in:${list}`)
  }
  if (!rules.length) exact = true
  return exact
}
