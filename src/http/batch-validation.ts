/**
 * A batch's operations against their schemas (./schemas/batch.ts), as POST /placemat/v1/batch
 * checks them before it writes and as the CLI's --db backend checks a planned apply before it
 * writes the file: the first failure is a 400 naming the operation.
 */
import {PlacementError} from '../core/errors.js'
import {reshapeMinor, type BatchOperation} from '../core/batch.js'
import {pyRepr, validateSchema} from './jsonschema.js'
import {Version} from './microversion.js'
import {BATCH_OPERATIONS} from './schemas/batch.js'
import {reshaperPostSchema} from './schemas/reshaper.js'

/**
 * Each batch operation against its schema (Placement's own for the endpoint it stands for),
 * as the batch route checks them before it writes; the first failure is a 400.
 */
export function validateOperations(operations: BatchOperation[]): void {
  operations.forEach(validateOperation)
}

/** The `i`th operation of a batch against its schema (a 400 naming it when it does not fit). */
export function validateOperation(o: BatchOperation, i: number): void {
  // Own keys only: "constructor" or "__proto__" is not an op.
  const schema = Object.hasOwn(BATCH_OPERATIONS, o.op as string) ? BATCH_OPERATIONS[o.op as string] : undefined
  if (!schema) throw new PlacementError(400, `operation ${i}: unknown op ${pyRepr(o.op)}`)
  let msg = validateSchema(schema, o)
  if (msg === null && o.op === 'reshape') {
    const {op: _op, microversion: _mv, ...body} = o
    msg = validateSchema(reshaperPostSchema(new Version(1, reshapeMinor(o))), body)
  }
  if (msg !== null) throw new PlacementError(400, `operation ${i} (${o.op}): JSON does not validate: ${msg}`)
}

/** The part of an operation that a planned batch shares between operations, by op. */
const PAYLOADS: Partial<Record<BatchOperation['op'], {key: string; empty: object}>> = {
  set_inventories: {key: 'inventories', empty: {}},
  set_traits: {key: 'traits', empty: []},
  set_aggregates: {key: 'aggregates', empty: []},
}

/**
 * validateOperation for operations that share payload objects, as a planned apply does (a
 * million providers, a handful of distinct inventories and trait and aggregate lists): each
 * distinct payload is checked in full once, and after that only the rest of the operation.
 * Payloads are never changed once made, so checked once is checked.
 */
export function sharedPayloadValidator(): (o: BatchOperation, i: number) => void {
  const checked = new WeakSet<object>()
  return (o, i) => {
    const shared = PAYLOADS[o.op]
    const payload = shared && (o as unknown as Record<string, unknown>)[shared.key]
    if (!shared || typeof payload !== 'object' || payload === null) return validateOperation(o, i)
    if (checked.has(payload)) return validateOperation({...o, [shared.key]: shared.empty} as BatchOperation, i)
    validateOperation(o, i)
    checked.add(payload)
  }
}
