/**
 * A dry run checks what the write would check: each operation against the batch route's
 * schemas, then the whole plan through the domain's own batch on the planning snapshot, so
 * a negative total or a reserved above the total is refused before anything is written.
 */
import {runBatch, type BatchOperation} from '../../core/batch.js'
import {PlacementError} from '../../core/errors.js'
import {Changes, type State} from '../../core/state.js'
import {badRequestError} from '../failure.js'

/** Lists of operations whose every operation passed the batch route's schemas (they are never changed after planning). */
const validated = new WeakSet<BatchOperation[]>()

/** True when `ops` passed the batch route's schemas here: a write in process need not check them again. */
export const schemasChecked = (ops: BatchOperation[]) => validated.has(ops)

/** Throws a bad-request Failure (exit 6) naming the first operation the write would refuse; changes only `s`, a copy. */
export async function checkOperations(s: State, ops: BatchOperation[]): Promise<void> {
  const {validateOperations} = await import('../../http/routes/placemat.js')
  s.changes = new Changes()
  try {
    validateOperations(ops)
    validated.add(ops)
    runBatch(s, Date.now(), ops)
  } catch (err) {
    if (err instanceof PlacementError) throw badRequestError(`the file cannot be applied (nothing was changed): ${err.detail}`)
    throw err
  } finally {
    s.changes = null
  }
}
