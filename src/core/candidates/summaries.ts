/**
 * provider_summaries: which providers a response describes, given the candidates it returns
 * (and, with exclude_nested_providers, every candidate found before the limit).
 */
import type {EnumerationPlan} from './plan.js'
import type {Index} from './provider-index.js'
import type {ProviderSummary} from './types.js'

/**
 * The summaries for candidates `picked` out of the `count` S-provider rows of `found`: every
 * provider of every tree a returned candidate takes resources from (trees by root index, each
 * in index order), or with excludeNested only the providers taken from.
 */
export function providerSummaries(
  ix: Index,
  plan: EnumerationPlan,
  found: number[],
  count: number,
  picked: number[],
  excludeNested: boolean,
): ProviderSummary[] {
  const {S, preps} = plan
  const gen = ix.nextStamp()
  const rootsUsed: number[] = []
  const markRoots = (c: number) => {
    for (let d = 0; d < S; d++) {
      const prep = preps[plan.slotGroup[d]]
      if (!prep.rcAmounts.length) continue // resourceless: in mappings only
      const r = ix.root[found[c * S + d]]
      if (ix.stamp[r] !== gen) {
        ix.stamp[r] = gen
        rootsUsed.push(r)
      }
    }
  }
  for (const c of picked) markRoots(c)
  const summaries: ProviderSummary[] = []
  rootsUsed.sort((a, b) => a - b)
  if (excludeNested) {
    // exclude_nested_providers: only providers allocated from in any (pre-limit) candidate,
    // then limit_results keeps those in the trees of the returned ones.
    const used = new Uint8Array(ix.n)
    for (let c = 0; c < count; c++) {
      for (let d = 0; d < S; d++) if (preps[plan.slotGroup[d]].rcAmounts.length) used[found[c * S + d]] = 1
    }
    for (let i = 0; i < ix.n; i++) if (used[i] && ix.stamp[ix.root[i]] === gen) summaries.push(ix.summary(i))
  } else {
    for (const r of rootsUsed) {
      for (const m of ix.treeMembers(r)) summaries.push(ix.summary(m))
    }
  }
  return summaries
}
