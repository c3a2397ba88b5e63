/**
 * A dry run checks what the write would check: each operation against the batch route's
 * schemas, then the whole plan through the domain's own batch on the planning snapshot, so
 * a negative total or a reserved above the total is refused before anything is written.
 */
import {runBatch, type BatchOperation} from '../../core/batch.js'
import {PlacementError} from '../../core/errors.js'
import type {State} from '../../core/state/state.js'
import {Changes} from '../../core/state/changes.js'
import {badRequestError} from '../failure.js'

/** The words of a plan refused as a whole, before or by the write. */
export const REFUSED = 'the file cannot be applied (nothing was changed): '

/** Throws a bad-request Failure (exit 6) naming the first operation the write would refuse; changes only `s`, a copy. */
export async function checkOperations(s: State, ops: Iterable<BatchOperation>): Promise<void> {
  const {sharedPayloadValidator} = await import('../../http/batch-validation.js')
  s.changes = new Changes()
  try {
    await asRefusal(() => runBatch(s, Date.now(), ops, {check: sharedPayloadValidator()}))
  } finally {
    s.changes = null
  }
}

/** What `run` refuses as a bad-request Failure (exit 6) saying the file cannot be applied. */
export async function asRefusal(run: () => unknown): Promise<void> {
  try {
    await run()
  } catch (err) {
    if (err instanceof PlacementError) throw badRequestError(`${REFUSED}${err.detail}`)
    throw err
  }
}
