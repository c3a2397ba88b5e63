/**
 * FirstFit (core/headroom/first-fit.ts) against the engine it stands for: claims made one after another
 * on planner's and generated clouds (hosts with their own disk beside pools, NUMA, GPU, disabled
 * hosts), each of a flavor's amounts summed into one group as a displaced consumer asks them, go
 * where the engine's first candidate that the caller allows (here: not on a host it refuses) goes,
 * and find none where the engine finds none.
 */
import {describe, expect, it} from 'vitest'
import {findCandidates} from '../../src/core/candidates/engine.js'
import type {CandidateRequest} from '../../src/core/candidates/request.js'
import {FirstFit, type Allocations} from '../../src/core/headroom/first-fit.js'
import {askedPerClass, flavorRequest} from '../../src/core/headroom/flavors.js'
import {stateFromSnapshot} from '../../src/core/snapshot.js'
import type {State} from '../../src/core/state/state.js'
import {depth} from '../helpers/depth.js'
import {generate, writeClaim} from '../helpers/headroom-clouds.js'
import {plannerCloud, plannerState} from '../helpers/planner-cloud.js'
import {rng} from '../helpers/rng.js'

const text = (a: Allocations | undefined) =>
  a === undefined
    ? 'none'
    : JSON.stringify([...a].map(([u, m]) => [u, [...m].sort()]).sort(([x], [y]) => String(x).localeCompare(String(y))))

/** Claims of random amounts one after another, each placed by FirstFit and by the engine; both must agree. */
function agree(s: State, wanted: Array<Map<string, number>>, seed: number, where: string): {placed: number; refused: number} {
  const r = rng(seed)
  const walk = new FirstFit(s)
  let placed = 0
  let refused = 0
  for (let k = 0; k < 400; k++) {
    const asked = wanted[Math.floor(r() * wanted.length)]
    // The caller refuses some hosts (a placement group's rule would): the next candidate is taken.
    const refusedRoots = new Set([...s.providers.values()].filter(() => r() < 0.15).map((p) => p.root))
    const allowed = (a: Allocations) => ([...a.keys()].some((u) => refusedRoots.has(s.providers.get(u)!.root)) ? 'refused' : null)
    const request: CandidateRequest = {
      groups: [{suffix: '', resources: asked, requiredTraits: [], forbiddenTraits: new Set(), memberOf: [], forbiddenAggs: new Set()}],
      sameSubtree: [],
      rootRequired: [],
      rootForbidden: new Set(['COMPUTE_STATUS_DISABLED']),
    }
    // The engine's candidates that place something on a host (one of pools alone places nothing there), allowed.
    const engine = findCandidates(s, request)
      .allocationRequests.map((a) => a.allocations)
      .find((a) => [...a.keys()].some((u) => !s.providers.get(u)!.traits.has('MISC_SHARES_VIA_AGGREGATE')) && allowed(a) === null)
    const found = walk.first(asked, allowed)
    const mine = 'allocations' in found ? found.allocations : undefined
    expect(text(mine), `${where}, claim ${k} of ${JSON.stringify([...asked])}`).toBe(text(engine))
    if (!mine) {
      refused++
      continue
    }
    writeClaim(s, `c${String(k).padStart(7, '0')}-0000-4000-8000-000000000000`, mine)
    walk.took(mine)
    placed++
  }
  return {placed, refused}
}

describe('FirstFit', () => {
  it("places each claim where the engine's first allowed candidate is, on planner's and generated clouds", () => {
    let placed = 0
    let none = 0
    for (const seed of depth([4242, 7], [4242])) {
      const cloud = plannerCloud(seed)
      const wanted = cloud.flavors.map((f) => askedPerClass(flavorRequest(f).request))
      const got = agree(plannerState(cloud), wanted, seed, `planner's cloud ${seed}`)
      placed += got.placed
      none += got.refused
    }
    for (let seed = 700; seed < 700 + depth(30, 10); seed++) {
      const {snapshot, flavors} = generate(seed)
      const wanted = flavors.map((f) => askedPerClass(flavorRequest(f).request)).filter((w) => w.size)
      if (!wanted.length) continue
      const got = agree(stateFromSnapshot(structuredClone(snapshot)), wanted, seed, `generated cloud ${seed}`)
      placed += got.placed
      none += got.refused
    }
    console.log(`first fit: ${placed} claims placed as the engine places them, ${none} found no place in either`)
    expect(placed).toBeGreaterThan(300)
    expect(none).toBeGreaterThan(10)
  })
})
