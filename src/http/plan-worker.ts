/**
 * The worker thread a make-room plan is worked out in (plan-aside.ts): the State decoded from
 * the image the daemon handed over, the core's planner run on it, the plan's record answered; a
 * refusal of the planner (PlacementError) answered as its status and words.
 */
import {parentPort, workerData} from 'node:worker_threads'
import {PlacementError} from '../core/errors.js'
import {planGoal} from '../core/make-room/plan.js'
import {planRecord} from '../core/make-room/record.js'
import {decodeStateImage} from '../core/state/image.js'
import {State} from '../core/state/state.js'
import type {PlanAsked, PlanAnswered} from './plan-aside.js'

const asked = workerData as PlanAsked
let answer: PlanAnswered
try {
  const s = new State()
  decodeStateImage(asked.image, s)
  answer = {record: planRecord(asked.goal, planGoal(s, asked.goal, asked.flavor, asked.opts))}
} catch (err) {
  answer =
    err instanceof PlacementError
      ? {refused: {status: err.status, detail: err.detail, code: err.code}}
      : {failed: err instanceof Error ? (err.stack ?? err.message) : String(err)}
}
parentPort!.postMessage(answer)
