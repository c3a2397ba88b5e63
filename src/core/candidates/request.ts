/**
 * Query-string semantics of GET /allocation_candidates (and the filter subset of
 * GET /resource_providers), as OpenStack Placement 8.0.0 parses them (placement/lib.py,
 * placement/util.py). Key names are assumed already validated against the jsonschema of the
 * microversion by the caller; this module checks the values and the cross-parameter rules and
 * raises PlacementError(400) with Placement's exact detail text and error code.
 *
 * Names of resource classes and traits are NOT checked here: Placement only finds out about an
 * unknown class or trait while searching (and not at all when an earlier group already came up
 * empty), so engine.ts raises those errors.
 */
import {ErrorCode, PlacementError, type ErrorCodeValue} from '../errors.js'
import {canonicalUuid, isUuidLike} from '../uuids.js'

/** A microversion as [major, minor]. */
export type Microversion = readonly [number, number]

export interface RequestGroup {
  /** '' for the unsuffixed group, else the suffix ('1', '_COMPUTE', ...). */
  suffix: string
  /** Resource class -> amount, in query order. Empty for a resourceless group (1.36+). */
  resources: Map<string, number>
  /** AND of any-of sets: [[A], [B, C]] means A and (B or C). */
  requiredTraits: string[][]
  forbiddenTraits: Set<string>
  /** AND of any-of sets of aggregate uuids. */
  memberOf: string[][]
  forbiddenAggs: Set<string>
  /** Provider uuid whose tree the group must be satisfied from. */
  inTree?: string
}

export interface CandidateRequest {
  /**
   * Request groups in Placement's order: the order in which each suffix first appears in the
   * query string (so the unsuffixed group is not necessarily first). The order only matters for
   * which error is reported first and for the mappings key order.
   */
  groups: RequestGroup[]
  groupPolicy?: 'none' | 'isolate'
  /** Each same_subtree value: a list of distinct suffixes. */
  sameSubtree: string[][]
  /** root_required positive traits, each as a one-element any-of set. */
  rootRequired: string[][]
  rootForbidden: Set<string>
  limit?: number
  /** False below microversion 1.29: candidates using 2+ providers of one tree are dropped. Default true. */
  nestedAware?: boolean
}

/** Filters of GET /resource_providers that need value parsing (see filterProviders). */
export interface ProviderFilters {
  name?: string
  uuid?: string
  inTree?: string
  resources?: Map<string, number>
  requiredTraits?: string[][]
  forbiddenTraits?: Set<string>
  memberOf?: string[][]
  forbiddenAggs?: Set<string>
}

const bad = (detail: string, code: ErrorCodeValue = ErrorCode.DEFAULT) => new PlacementError(400, detail, code)

const atLeast = (v: Microversion, minor: number) => v[0] > 1 || (v[0] === 1 && v[1] >= minor)

// ---- value parsers (util.py) ---------------------------------------------------------------

export {isUuidLike}

/** Python's int() on a str, for the decimal forms a query string can carry; null when invalid. */
function pyInt(s: string): number | null {
  const m = /^\s*([+-]?)(\d+(?:_\d+)*)\s*$/.exec(s)
  if (!m) return null
  const n = Number(m[2].replace(/_/g, ''))
  return m[1] === '-' ? -n : n
}

const pyStrip = (s: string) => s.replace(/^\s+|\s+$/g, '')

/** Python's repr() of a str. */
export function pyRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'"
  let out = quote
  for (const ch of s) {
    const c = ch.codePointAt(0)!
    if (ch === '\\') out += '\\\\'
    else if (ch === quote) out += '\\' + quote
    else if (ch === '\n') out += '\\n'
    else if (ch === '\r') out += '\\r'
    else if (ch === '\t') out += '\\t'
    else if (c < 0x20 || c === 0x7f) out += '\\x' + c.toString(16).padStart(2, '0')
    else out += ch
  }
  return out + quote
}

const pyList = (items: string[]) => `[${items.map(pyRepr).join(', ')}]`

const RESOURCES_FORM =
  'Badly formed resources parameter. Expected resources query string parameter in form: ' + '?resources=VCPU:2,MEMORY_MB:1024.'

/** util.normalize_resources_qs_param: "VCPU:2,MEMORY_MB:1024" -> Map. */
export function parseResources(qs: string): Map<string, number> {
  if (pyStrip(qs) === '') throw bad(`${RESOURCES_FORM} Got: empty string.`)
  const out = new Map<string, number>()
  for (const rt of qs.split(',')) {
    const parts = rt.split(':')
    if (parts.length !== 2) throw bad(`${RESOURCES_FORM} Got: ${rt}.`)
    const [rc, raw] = parts
    const amount = pyInt(raw)
    if (amount === null) throw bad(`Requested resource ${rc} expected positive integer amount. Got: ${raw}.`)
    if (amount < 1) throw bad(`Requested resource ${rc} requires amount >= 1. Got: ${amount}.`)
    out.set(rc, amount)
  }
  return out
}

/** util.normalize_traits_qs_param: one value of required / requiredN / root_required. */
export function parseTraitsValue(val: string, allowForbidden: boolean, allowAny: boolean): {required: string[][]; forbidden: Set<string>} {
  if (val.startsWith('in:')) {
    if (!allowAny) {
      throw bad(
        `Invalid query string parameters: The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported ` +
          `since microversion 1.39. Got: ${val}`,
      )
    }
    const any = [...new Set(val.slice(3).split(',').map(pyStrip))]
    if (any.some((t) => t === '')) {
      throw bad(
        `Invalid query string parameters: Expected 'required' parameter value of the form: ` +
          `in:HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty trait in: ${val}`,
      )
    }
    if (any.some((t) => t.startsWith('!'))) {
      throw bad(
        `Invalid query string parameters: The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support ` + `forbidden traits. Got: ${val}`,
      )
    }
    return {required: [any], forbidden: new Set()}
  }
  const all = val.split(',').map(pyStrip)
  const forbidden = new Set(all.filter((t) => t.startsWith('!')).map((t) => t.replace(/^!+/, '')))
  if (all.some((t) => t === '') || [...forbidden].some((t) => t === '')) {
    const form = allowForbidden ? 'HW_CPU_X86_VMX,!CUSTOM_MAGIC' : 'HW_CPU_X86_VMX,CUSTOM_MAGIC'
    throw bad(
      `Invalid query string parameters: Expected 'required' parameter value of the form: ${form}. ` + `Got an empty trait in: ${val}`,
    )
  }
  const required = all.filter((t) => !t.startsWith('!')).map((t) => [t])
  if (forbidden.size && !allowForbidden) {
    throw bad(
      `Invalid query string parameters: Expected 'required' parameter value of the form: ` + `HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: ${val}`,
    )
  }
  return {required, forbidden}
}

/** util.normalize_traits_qs_params: every value of one required key, per microversion. */
export function parseRequiredValues(values: string[], version: Microversion): {required: string[][]; forbidden: Set<string>} {
  const allowForbidden = atLeast(version, 22)
  const allowAny = atLeast(version, 39)
  // Up to 1.38 a repeated key means its last value only.
  const vals = allowAny ? values : values.slice(-1)
  const required: string[][] = []
  const forbidden = new Set<string>()
  for (const v of vals) {
    const r = parseTraitsValue(v, allowForbidden, allowAny)
    required.push(...r.required)
    for (const t of r.forbidden) forbidden.add(t)
  }
  return {required, forbidden}
}

/** util.normalize_member_of_qs_param: one value. */
function parseMemberOfValue(value: string): {required: string[]; forbidden: string[]} {
  if (value.includes(',') && !(value.startsWith('in:') || value.startsWith('!in:'))) {
    throw bad(
      `Multiple values for 'member_of' must be prefixed with the 'in:' or '!in:' keyword using the valid ` + `microversion. Got: ${value}`,
    )
  }
  let required: string[] = []
  let forbidden: string[] = []
  if (value.startsWith('!in:')) forbidden = [...new Set(value.slice(4).split(','))]
  else if (value.startsWith('!')) forbidden = [value.slice(1)]
  else if (value.startsWith('in:')) required = [...new Set(value.slice(3).split(','))]
  else required = [value]
  for (const agg of new Set([...required, ...forbidden])) {
    if (!isUuidLike(agg)) {
      throw bad(`Invalid query string parameters: Expected 'member_of' parameter to contain valid UUID(s). Got: ${agg}`)
    }
  }
  // Aggregates are stored in canonical form, so any accepted spelling finds them.
  return {required: [...new Set(required.map(canonicalUuid))], forbidden: [...new Set(forbidden.map(canonicalUuid))]}
}

/** util.normalize_member_of_qs_params: every value of member_of<suffix>. */
export function parseMemberOfValues(
  values: string[],
  suffix: string,
  version: Microversion,
): {memberOf: string[][]; forbidden: Set<string>} {
  if (!atLeast(version, 24) && values.length > 1) {
    throw bad(`Multiple member_of${suffix} parameters are not supported`)
  }
  const memberOf: string[][] = []
  const forbidden = new Set<string>()
  for (const v of values) {
    const r = parseMemberOfValue(v)
    if (r.required.length) memberOf.push(r.required)
    if (r.forbidden.length) {
      if (!atLeast(version, 32)) {
        throw bad(`Forbidden member_of${suffix} parameters are not supported in the specified microversion`)
      }
      for (const a of r.forbidden) forbidden.add(a)
    }
  }
  return {memberOf, forbidden}
}

/** util.normalize_in_tree_qs_params. */
export function parseInTree(value: string): string {
  const v = pyStrip(value)
  if (!isUuidLike(v)) {
    throw bad(`Invalid query string parameters: Expected 'in_tree' parameter to be a format of uuid. Got: ${value}`)
  }
  return v
}

// ---- GET /allocation_candidates -------------------------------------------------------------

const KEY_RE = /^(resources|required|member_of|in_tree)([1-9][0-9]*)?$/
const KEY_RE_1_33 = /^(resources|required|member_of|in_tree)([a-zA-Z0-9_-]{1,64})?$/

/** A request group that asks nothing yet. */
export function newGroup(suffix: string): RequestGroup {
  return {
    suffix,
    resources: new Map(),
    requiredTraits: [],
    forbiddenTraits: new Set(),
    memberOf: [],
    forbiddenAggs: new Set(),
  }
}

/**
 * Parses the query of GET /allocation_candidates (microversion 1.10+) into a CandidateRequest,
 * raising Placement's 400s in Placement's order. `params`: each key's values in query order, keys
 * in order of first appearance.
 */
export function parseCandidateRequest(params: Map<string, string[]>, version: Microversion): CandidateRequest {
  // RequestWideParams.from_request
  let limit: number | undefined
  const limits = params.get('limit')
  if (limits?.length) {
    const n = pyInt(limits[0]) // the first one wins (the schema checked the last one)
    if (n !== null && n > 0) limit = n
  }
  const policies = params.get('group_policy')
  const groupPolicy = policies?.length ? (policies[0] as 'none' | 'isolate') : undefined

  const rootRequired: string[][] = []
  const rootForbidden = new Set<string>()
  const rr = params.get('root_required')
  if (rr?.length) {
    if (rr.length > 1) {
      throw bad("Query parameter 'root_required' may be specified only once.", ErrorCode.QUERY_DUPLICATE_KEY)
    }
    const {required, forbidden} = parseTraitsValue(rr[0], true, false)
    const req = new Set(required.map((s) => s[0]))
    const conflicts = [...forbidden].filter((t) => req.has(t))
    if (conflicts.length) {
      throw bad(`Conflicting required and forbidden traits found in root_required: ${conflicts.join(', ')}`, ErrorCode.QUERY_BAD_VALUE)
    }
    for (const t of req) rootRequired.push([t])
    for (const t of forbidden) rootForbidden.add(t)
  }

  const sameSubtree: string[][] = []
  for (const val of params.get('same_subtree') ?? []) {
    const suffixes = [...new Set(val.split(',').map(pyStrip))]
    if (suffixes.includes('')) {
      throw bad('Empty string (unsuffixed group) can not be specified in `same_subtree` ', ErrorCode.QUERY_BAD_VALUE)
    }
    sameSubtree.push(suffixes)
  }

  // RequestGroup.dict_from_request
  const pattern = atLeast(version, 33) ? KEY_RE_1_33 : KEY_RE
  const bySuffix = new Map<string, RequestGroup>()
  for (const [key, values] of params) {
    const m = pattern.exec(key)
    if (!m) continue
    const prefix = m[1]
    const suffix = m[2] ?? ''
    let g = bySuffix.get(suffix)
    if (!g) bySuffix.set(suffix, (g = newGroup(suffix)))
    if (prefix === 'resources') {
      for (const v of values) g.resources = parseResources(v)
    } else if (prefix === 'required') {
      const r = parseRequiredValues(values, version)
      g.requiredTraits = r.required
      g.forbiddenTraits = r.forbidden
    } else if (prefix === 'member_of') {
      const r = parseMemberOfValues(values, suffix, version)
      g.memberOf = r.memberOf
      g.forbiddenAggs = r.forbidden
    } else {
      for (const v of values) g.inTree = parseInTree(v)
    }
  }
  const groups = [...bySuffix.values()]

  if (atLeast(version, 36)) {
    const resourceless = groups.filter((g) => g.resources.size === 0).map((g) => g.suffix)
    const inSubtree = new Set(sameSubtree.flat())
    if (resourceless.length === groups.length) {
      throw bad('There must be at least one resources or resources[$S] parameter.', ErrorCode.QUERY_MISSING_VALUE)
    }
    const badGroups = resourceless.filter((s) => !inSubtree.has(s))
    if (badGroups.length) {
      throw bad(
        'Resourceless suffixed group request should be specified in `same_subtree` query param: ' + `bad group(s) - ${pyList(badGroups)}.`,
        ErrorCode.QUERY_BAD_VALUE,
      )
    }
    const unknown = [...inSubtree].filter((s) => !bySuffix.has(s))
    if (unknown.length) {
      throw bad(
        `Real suffixes should be specified in \`same_subtree\`: ${pyList(unknown)} not found in ` + `${pyList([...bySuffix.keys()])}.`,
        ErrorCode.QUERY_BAD_VALUE,
      )
    }
  } else {
    const traitOrphans = groups.filter((g) => g.requiredTraits.length && !g.resources.size).map((g) => `required${g.suffix}`)
    if (traitOrphans.length) {
      throw bad(
        'All traits parameters must be associated with resources.  Found the following orphaned traits keys: ' + traitOrphans.join(', '),
      )
    }
    const aggOrphans = groups
      .filter((g) => !g.resources.size && (g.memberOf.length || g.forbiddenAggs.size))
      .map((g) => `member_of${g.suffix}`)
    if (aggOrphans.length) {
      throw bad(
        'All member_of parameters must be associated with resources. Found the following orphaned member_of ' +
          `keys: ${aggOrphans.join(', ')}`,
      )
    }
    if (!groups.every((g) => g.resources.size)) throw bad('All request groups must specify resources.')
    if (!groups.length) throw bad('At least one request group (`resources` or `resources{$S}`) is required.')
  }

  if (atLeast(version, 22)) {
    const conflicts: string[] = []
    for (const g of groups) {
      for (const any of g.requiredTraits) {
        if (any.every((t) => g.forbiddenTraits.has(t))) conflicts.push(`required${g.suffix}: (${[...any].sort().join(', ')})`)
      }
    }
    if (conflicts.length) {
      throw bad(`Conflicting required and forbidden traits found in the following traits keys: ${conflicts.sort().join(', ')}`)
    }
  }

  if (!groupPolicy && groups.filter((g) => g.suffix !== '').length > 1) {
    throw bad('The "group_policy" parameter is required when specifying more than one "resources{N}" parameter.')
  }

  return {groups, groupPolicy, sameSubtree, rootRequired, rootForbidden, limit, nestedAware: atLeast(version, 29)}
}

// ---- GET /resource_providers ----------------------------------------------------------------

/**
 * Parses the filters of GET /resource_providers that carry value semantics (member_of, required,
 * name, uuid, in_tree, resources), in Placement's order of checks. Keys must already be valid for
 * the microversion (jsonschema); a single-valued key uses its last value, as webob does.
 */
export function parseProviderFilters(params: Map<string, string[]>, version: Microversion): ProviderFilters {
  const out: ProviderFilters = {}
  const last = (k: string) => {
    const v = params.get(k)
    return v?.length ? v[v.length - 1] : undefined
  }
  const mo = params.get('member_of')
  if (mo?.length) {
    const r = parseMemberOfValues(mo, '', version)
    out.memberOf = r.memberOf
    out.forbiddenAggs = r.forbidden
  }
  const req = params.get('required')
  if (req?.length) {
    const r = parseRequiredValues(req, version)
    out.requiredTraits = r.required
    out.forbiddenTraits = r.forbidden
  }
  const uuid = last('uuid')
  if (uuid !== undefined) out.uuid = uuid
  const name = last('name')
  if (name !== undefined) out.name = name
  const inTree = last('in_tree')
  if (inTree !== undefined) out.inTree = inTree
  const res = last('resources')
  if (res !== undefined) out.resources = parseResources(res)
  return out
}
