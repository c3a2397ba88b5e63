/**
 * N+1 in one call (core/headroom/losses.ts) against the what-if it stands for: for every host, rack, row
 * and room of planner's clouds (consumers placed by claims, an anti-affinity group, local disk
 * beside room pools, disabled hosts) and of generated clouds, each loss's displaced, unplaced and
 * cloud fit of every flavor are those of whatIf({without: [it]}) and the headroom after it.
 */
import {describe, expect, it} from 'vitest'
import {flavorRequest, type FlavorRequest} from '../../src/core/headroom/flavors.js'
import {headroom} from '../../src/core/headroom/headroom.js'
import {lossesOneByOne} from '../../src/core/headroom/losses.js'
import {stateFromSnapshot} from '../../src/core/snapshot.js'
import type {State} from '../../src/core/state/state.js'
import {whatIf, type LostDomain} from '../../src/core/headroom/what-if.js'
import {depth} from '../helpers/depth.js'
import {generate} from '../helpers/headroom-clouds.js'
import {plannerCloud, plannerState} from '../helpers/planner-cloud.js'

/** Each loss as the what-if answers it. */
function whatIfSays(s: State, lost: LostDomain, flavors: FlavorRequest[]) {
  const w = whatIf(s, {without: [lost]})
  const cloud = headroom(w.after, flavors, {levels: ['cloud']}).domains
  return {
    displaced: w.displaced.length,
    unplaced: w.displaced.filter((d) => d.to === null).length,
    survives: w.survives,
    fit: flavors.map((f) => cloud.find((d) => d.flavor === f.flavor)!.fit),
  }
}

const LEVELS = ['host', 'rack', 'row', 'room'] as const

function check(s: State, flavors: FlavorRequest[], where: string, levels: readonly (typeof LEVELS)[number][] = LEVELS) {
  const before = JSON.stringify(headroom(s, flavors))
  let losses = 0
  let displaced = 0
  for (const level of levels) {
    const names: string[] = []
    for (const loss of lossesOneByOne(s, level, flavors)) {
      names.push(loss.name)
      const {hosts: _, level: __, name, ...got} = loss
      expect(got, `${where}, without ${level} ${name}`).toEqual(whatIfSays(s, {level, name}, flavors))
      losses++
      displaced += loss.displaced
    }
    expect(names).toEqual([...names].sort())
  }
  // The cloud itself is as it was.
  expect(JSON.stringify(headroom(s, flavors))).toBe(before)
  return {losses, displaced}
}

describe('every domain lost in turn', () => {
  it("is each loss's what-if, on planner's clouds", () => {
    let losses = 0
    let displaced = 0
    for (const seed of depth([4242, 7, 99], [4242])) {
      const cloud = plannerCloud(seed)
      // The quick run leaves the hosts' losses to the generated clouds below.
      const got = check(
        plannerState(cloud),
        cloud.flavors.map(flavorRequest),
        `seed ${seed}`,
        depth(LEVELS, ['rack', 'row', 'room'] as const),
      )
      losses += got.losses
      displaced += got.displaced
    }
    console.log(`losses: ${losses} on planner's clouds, ${displaced} consumers placed again, each as its what-if`)
    expect(displaced).toBeGreaterThan(losses)
  })

  it("is each loss's what-if, on generated clouds", () => {
    let losses = 0
    for (let seed = 500; seed < 500 + depth(30, 4); seed++) {
      const {snapshot, flavors} = generate(seed)
      losses += check(stateFromSnapshot(structuredClone(snapshot)), flavors.map(flavorRequest), `seed ${seed}`).losses
    }
    expect(losses).toBeGreaterThan(50)
  })
})
