/**
 * Provider filters shared by the searches: per-provider tests on traits and aggregates
 * (required and forbidden traits, member_of, forbidden aggregates), the 400s for unknown
 * names, the root-trait filter on anchors, and GET /resource_providers' filter built on them.
 */
import {badRequest} from '../errors.js'
import type {Provider, State} from '../state/state.js'
import {GONE} from './index-constants.js'
import {getIndex, type Index} from './provider-index.js'
import type {CandidateRequest, ProviderFilters} from './request.js'

/** Does p belong to at least one aggregate of every set? */
export function inAllAggSets(p: Provider, sets: string[][]): boolean {
  for (const set of sets) {
    let ok = false
    for (const a of set)
      if (p.aggregates.has(a)) {
        ok = true
        break
      }
    if (!ok) return false
  }
  return true
}

/**
 * The providers (ascending indices) that can pass a member_of filter: members of every set and,
 * with `trees`, every provider of a tree whose root is one (the rule for a group that may
 * spread over a tree: the provider or its root). Null when there is no filter or when it
 * would not narrow a scan of `scanSize` providers much: a scan checks the filter anyway.
 */
export function memberScope(ix: Index, sets: string[][], trees: boolean, scanSize: number): Int32Array | null {
  if (!sets.length) return null
  let pick: string[] | null = null
  let size = Infinity
  for (const set of sets) {
    let n = 0
    for (const agg of set) n += ix.state.aggregateMembers.get(agg)?.size ?? 0
    if (n < size) {
      size = n
      pick = set
    }
  }
  if (size * 4 > scanSize) return null
  const idxOf = ix.idx()
  const gen = ix.nextStamp()
  const out: number[] = []
  const add = (i: number) => {
    if (ix.stamp[i] === gen) return
    ix.stamp[i] = gen
    out.push(i)
  }
  for (const agg of pick!) {
    for (const u of ix.state.aggregateMembers.get(agg) ?? []) {
      const i = idxOf.get(u)
      if (i === undefined || !inAllAggSets(ix.provs[i], sets)) continue
      add(i)
      if (trees && ix.root[i] === i) for (const m of ix.treeMembers(i)) add(m)
    }
  }
  return Int32Array.from(out).sort()
}

export function inAnyAgg(p: Provider, aggs: Set<string>): boolean {
  if (!aggs.size) return false
  for (const a of aggs) if (p.aggregates.has(a)) return true
  return false
}

/** Does p have at least one trait of every set? */
export function hasTraitSets(p: Provider, sets: string[][]): boolean {
  for (const set of sets) {
    let ok = false
    for (const t of set)
      if (p.traits.has(t)) {
        ok = true
        break
      }
    if (!ok) return false
  }
  return true
}

export function hasAnyTrait(p: Provider, traits: Set<string>): boolean {
  if (!traits.size) return false
  for (const t of traits) if (p.traits.has(t)) return true
  return false
}

/** Is any provider in every aggregate set (provider_ids_matching_aggregates is non-empty)? */
export function anyProviderInAggSets(ix: Index, sets: string[][]): boolean {
  for (const agg of sets[0]) {
    const members = ix.state.aggregateMembers.get(agg)
    if (!members) continue
    for (const u of members) {
      const p = ix.state.providers.get(u)
      if (p && inAllAggSets(p, sets)) return true
    }
  }
  return false
}

export function checkTraitNames(state: State, names: Iterable<string>, prefix = ''): void {
  for (const t of names) if (!state.traits.has(t)) throw badRequest(`${prefix}No such trait(s): ${t}.`)
}

export function checkClassNames(state: State, names: Iterable<string>): void {
  for (const rc of names) {
    if (!state.classes.has(rc)) throw badRequest(`Invalid resource class in resources parameter: No such resource class ${rc}.`)
  }
}
/**
 * RequestWideSearchContext: root_required / root forbidden traits filter the anchors. The
 * roots allowed as anchors (1 at a root's index), null when there is no such filter, false
 * when no root passes it; worked out once per filter while the shape stands (Index.rootFilters).
 */
export function rootAnchors(ix: Index, req: CandidateRequest): Uint8Array | null | false {
  const state = ix.state
  const rootReq = req.rootRequired.map((s) => s[0])
  if (!rootReq.length && !req.rootForbidden.size) return null
  checkTraitNames(state, rootReq)
  checkTraitNames(state, req.rootForbidden)
  const key = `${rootReq.join(',')}|${[...req.rootForbidden].sort().join(',')}`
  let kept = ix.rootFilters.get(key)
  if (kept === undefined) ix.rootFilters.set(key, (kept = rootsWith(ix, rootReq, req.rootForbidden)))
  return kept
}

function rootsWith(ix: Index, rootReq: string[], rootForbidden: Set<string>): Uint8Array | false {
  const anchorOk = new Uint8Array(ix.n)
  let any = false
  for (let i = 0; i < ix.n; i++) {
    if (ix.parent[i] >= 0 || ix.provs[i].parent !== null || !ix.live(i)) continue
    const pt = ix.provs[i].traits
    if (rootReq.every((t) => pt.has(t)) && !hasAnyTrait(ix.provs[i], rootForbidden)) {
      anchorOk[i] = 1
      any = true
    }
  }
  return any ? anchorOk : false
}

// ---- GET /resource_providers ----------------------------------------------------------------

/**
 * The providers matching the filters of GET /resource_providers, in state order
 * (resource_provider.get_all_by_filters). Throws PlacementError(400) for an unknown trait
 * ('Invalid trait(s) in "required" parameter: No such trait(s): X.') or class ('Invalid
 * resource class in resources parameter: No such resource class X.'), in Placement's order.
 */
export function filterProviders(state: State, f: ProviderFilters): Provider[] {
  const ix = getIndex(state)
  let treeRoot = -1
  if (f.inTree) {
    const t = ix.idx().get(f.inTree)
    if (t === undefined) return []
    treeRoot = ix.root[t]
  }
  let pool: number[] | null = null
  const req = f.requiredTraits ?? []
  if (req.length) {
    for (const set of req) checkTraitNames(state, set, 'Invalid trait(s) in "required" parameter: ')
    pool = []
    for (let i = 0; i < ix.n; i++) if (ix.live(i) && hasTraitSets(ix.provs[i], req)) pool.push(i)
    if (!pool.length) return []
  }
  const forb = f.forbiddenTraits ?? new Set<string>()
  checkTraitNames(state, forb, 'Invalid trait(s) in "required" parameter: ')
  const memberOf = f.memberOf ?? []
  if (memberOf.length && !anyProviderInAggSets(ix, memberOf)) return []
  const badAggs = f.forbiddenAggs ?? new Set<string>()
  const res = f.resources ? [...f.resources] : []
  checkClassNames(
    state,
    res.map(([rc]) => rc),
  )
  const rcs = res.map(([rc, amount]) => {
    const inv = ix.rcs.get(rc)
    return {slotOf: inv ? ix.slotOf(inv) : null, amount}
  })
  // ?uuid= and ?name= each name one provider: look it up rather than test every provider.
  if (f.uuid || f.name) {
    const named = f.uuid ? state.providers.get(f.uuid) : state.providerByName.get(f.name!)
    const at = named ? ix.idx().get(named.uuid) : undefined
    if (at === undefined || (pool && !pool.includes(at))) return []
    pool = [at]
  }
  const out: Provider[] = []
  const test = (i: number) => {
    const p = ix.provs[i]
    if (p === GONE) return
    if (f.name && p.name !== f.name) return
    if (f.uuid && p.uuid !== f.uuid) return
    if (treeRoot >= 0 && ix.root[i] !== treeRoot) return
    if (forb.size && hasAnyTrait(p, forb)) return
    if (memberOf.length && !inAllAggSets(p, memberOf)) return
    if (badAggs.size && inAnyAgg(p, badAggs)) return
    for (const {slotOf, amount} of rcs) {
      const s = slotOf ? slotOf[i] : -1
      if (s < 0 || !ix.fits(s, amount)) return
    }
    out.push(p)
  }
  if (pool) for (const i of pool) test(i)
  else if (treeRoot >= 0)
    for (const i of ix.treeMembers(treeRoot)) test(i) // in_tree: that tree, not the cloud
  else for (let i = 0; i < ix.n; i++) test(i)
  return out
}
