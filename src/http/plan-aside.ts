/**
 * A make-room plan worked out beside the event loop, so the daemon goes on serving claims while
 * it runs (a plan on 10,000 hosts takes seconds of CPU; capacity's counts take milliseconds and
 * stay inline). The State as it was read is handed over as its image (core/state/image.ts, the
 * columns a clean stop leaves), which a worker thread decodes and plans on: the plan sees that
 * State and nothing written after it, as a plan made inline would. Where this file runs as
 * TypeScript (the tests in process, which have no compiled worker to start) the plan is made
 * inline.
 */
import {Worker} from 'node:worker_threads'
import {PlacementError, type ErrorCodeValue} from '../core/errors.js'
import type {FlavorRequest} from '../core/headroom/flavors.js'
import {planGoal} from '../core/make-room/plan.js'
import {planRecord, type PlanGoal, type PlanRecord} from '../core/make-room/record.js'
import type {SolveOptions} from '../core/make-room/solve.js'
import {encodeStateImage, type StateImage} from '../core/state/image.js'
import type {State} from '../core/state/state.js'

export interface PlanAsked {
  image: StateImage
  goal: PlanGoal
  flavor: FlavorRequest | undefined
  opts: SolveOptions
}

export type PlanAnswered = {record: PlanRecord} | {refused: {status: number; detail: string; code: ErrorCodeValue}} | {failed: string}

/** The worker's compiled file beside this one; none when this runs as TypeScript. */
const WORKER = import.meta.url.endsWith('.js') ? new URL('./plan-worker.js', import.meta.url) : null

export async function planAside(s: State, goal: PlanGoal, flavor: FlavorRequest | undefined, opts: SolveOptions): Promise<PlanRecord> {
  if (!WORKER) return planRecord(goal, planGoal(s, goal, flavor, opts))
  const asked: PlanAsked = {image: encodeStateImage(s, 0, 0), goal, flavor, opts}
  const answer = await new Promise<PlanAnswered>((resolve, reject) => {
    const worker = new Worker(WORKER, {workerData: asked})
    worker.once('message', resolve)
    worker.once('error', reject)
    worker.once('exit', (code) => reject(new Error(`the planner's thread ended (exit ${code}) without a plan`)))
  })
  if ('record' in answer) return answer.record
  if ('refused' in answer) throw new PlacementError(answer.refused.status, answer.refused.detail, answer.refused.code)
  throw new Error(`the planner failed: ${answer.failed}`)
}
