/**
 * Where claims would go, one after another, found on the host forest instead of by a search of
 * the whole cloud. A claim takes the engine's first candidate, and the engine lists candidates
 * host after host, each host's in its shape's order (tree-shapes.ts: the order never depends on
 * what is used, which only decides which fit now). So the first candidate is the first enabled
 * host, in order, with a candidate that fits what is free now (pools shared), and the first of
 * its candidates that does. With sharing pools the engine searches every tree for each claim;
 * here a claim costs the hosts it passes over, and a host that had no room for a request is
 * never looked at again for it (usage only grows while claims are made).
 */
import {hostFreeNow, poolFreeNow} from './fit-walk.js'
import {newGroup, type CandidateRequest} from '../candidates/request.js'
import {DISABLED_TRAIT} from '../host.js'
import type {State} from '../state/state.js'
import {candidatesByHost, hostForest, type HostForest, type ShapeCandidates} from './tree-shapes.js'

export type Allocations = Map<string, Map<string, number>>

/**
 * What a forest's FirstFits work in, made once (one is made for each set of claims, N+1 makes
 * hundreds): host numbers by root uuid, free amounts, and which hosts' are read (by epoch: each
 * FirstFit its own, so nothing is cleared). One FirstFit of a forest at a time.
 */
interface Scratch {
  hostNumber: Map<string, number>
  free: Float64Array
  seen: Int32Array
  epoch: number
}
const scratches = new WeakMap<HostForest, Scratch>()

function scratchOf(forest: HostForest): Scratch {
  let w = scratches.get(forest)
  if (!w)
    scratches.set(
      forest,
      (w = {
        hostNumber: new Map(forest.hosts.map((h, i) => [h.uuid, i])),
        free: new Float64Array(forest.pairAt[forest.hosts.length]),
        seen: new Int32Array(forest.hosts.length),
        epoch: 0,
      }),
    )
  return w
}

/** Claims made one after another on `s`, as the engine's first candidate would place them; written by the caller, then told (took). */
export class FirstFit {
  private readonly forest: HostForest
  private readonly scratch: Scratch
  private readonly epoch: number
  private readonly free: Float64Array
  private readonly poolFree: Float64Array
  private readonly passed: Uint8Array
  /** One request per amounts asked, so that their candidates are searched once per shape. */
  private readonly requests = new Map<string, CandidateRequest>()
  /** Per request, the first host that may still have room for it. */
  private readonly from = new Map<CandidateRequest, number>()

  /** `avoid`: root uuids of hosts passed over, as if they held nothing (hosts taken as lost). */
  constructor(
    private readonly s: State,
    avoid: ReadonlySet<string> = new Set(),
  ) {
    this.forest = hostForest(s)
    this.scratch = scratchOf(this.forest)
    this.epoch = ++this.scratch.epoch
    this.free = this.scratch.free
    this.poolFree = poolFreeNow(this.forest)
    this.passed = this.forest.disabled.slice()
    for (const uuid of avoid) {
      const i = this.scratch.hostNumber.get(uuid)
      if (i !== undefined) this.passed[i] = 1
    }
  }

  /**
   * The first candidate for `wanted` (one group, disabled hosts avoided, as Nova asks) that fits
   * now and that `allowed` accepts (null: yes; else why not): its allocations, or why there is none.
   */
  first(
    wanted: ReadonlyMap<string, number>,
    allowed: (allocations: Allocations) => string | null,
  ): {allocations: Allocations} | {why: string} {
    const request = this.requestFor(wanted)
    const candidatesOf = candidatesByHost(this.s, this.forest, request)
    const n = this.forest.hosts.length
    let firstWithRoom = -1
    let refusal = ''
    for (let i = this.from.get(request) ?? 0; i < n; i++) {
      if (this.passed[i]) continue
      const c = candidatesOf(i)
      for (let j = 0; j + 1 < c.start.length; j++) {
        if (!this.fits(i, c, j)) continue
        if (firstWithRoom < 0) firstWithRoom = i
        const allocations = this.allocationsOf(i, c, j)
        const why = allowed(allocations)
        if (why === null) {
          this.from.set(request, firstWithRoom)
          return {allocations}
        }
        refusal ||= why
      }
    }
    this.from.set(request, firstWithRoom < 0 ? n : firstWithRoom)
    return {
      why: refusal
        ? `every host with room breaks a placement group's rule: ${refusal}`
        : `no enabled host has room for ${[...wanted].map(([rc, a]) => `${rc}:${a}`).join(',')}`,
    }
  }

  /** What a claim written on `s` with `allocations` (first's) took. */
  took(allocations: Allocations): void {
    for (const uuid of allocations.keys()) {
      const i = this.hostOf(uuid)
      if (i >= 0 && this.scratch.seen[i] === this.epoch) hostFreeNow(this.forest, i, this.free)
    }
    const now = poolFreeNow(this.forest)
    this.poolFree.set(now)
  }

  private hostOf(uuid: string): number {
    const root = this.s.providers.get(uuid)?.root
    return root === undefined ? -1 : (this.scratch.hostNumber.get(root) ?? -1)
  }

  private requestFor(wanted: ReadonlyMap<string, number>): CandidateRequest {
    const key = [...wanted].map(([rc, n]) => `${rc}:${n}`).join(',')
    let request = this.requests.get(key)
    if (!request)
      this.requests.set(
        key,
        (request = {
          groups: [{...newGroup(''), resources: new Map(wanted)}],
          sameSubtree: [],
          rootRequired: [],
          rootForbidden: new Set([DISABLED_TRAIT]),
        }),
      )
    return request
  }

  /** Whether candidate `j` of host `i` fits what is free now (its pools' free shared by every host). */
  private fits(i: number, c: ShapeCandidates, j: number): boolean {
    const {forest, free} = this
    if (this.scratch.seen[i] !== this.epoch) {
      hostFreeNow(forest, i, free)
      this.scratch.seen[i] = this.epoch
    }
    const {pairSharing, poolPair} = forest.shapes[forest.shapeOf[i]]
    const at = forest.pairAt[i]
    for (let t = c.start[j]; t < c.start[j + 1]; t++) {
      const k = c.pair[t]
      if ((pairSharing[k] ? this.poolFree[poolPair[k]] : free[at + k]) < c.amount[t]) return false
    }
    return true
  }

  private allocationsOf(i: number, c: ShapeCandidates, j: number): Allocations {
    const {forest} = this
    const {pairs} = forest.shapes[forest.shapeOf[i]]
    const out: Allocations = new Map()
    for (let t = c.start[j]; t < c.start[j + 1]; t++) {
      const {member, rc} = pairs[c.pair[t]]
      const uuid = forest.members[forest.memberAt[i] + member].uuid
      let amounts = out.get(uuid)
      if (!amounts) out.set(uuid, (amounts = new Map()))
      amounts.set(rc, (amounts.get(rc) ?? 0) + c.amount[t])
    }
    return out
  }
}
