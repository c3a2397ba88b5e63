/** The flag every write that can break a placement group takes. */
import {Flags} from '@oclif/core'
import {ApiError} from '../../client/client.js'
import {AFFINITY_VIOLATION} from '../../core/errors.js'
import {withContext} from '../failure.js'

export const allowViolationsFlag = {
  'allow-violations': Flags.boolean({
    description: 'go ahead even if it breaks a placement group rule (the breach is kept and `placemat audit` reports it)',
  }),
}

/** What a refusal for a group rule adds to its message. */
export const ALLOW_HINT = ' (nothing was changed; --allow-violations to go ahead anyway)'

/** A refusal for a placement group rule (409 placemat.affinity_violation). */
export const isGroupViolation = (err: unknown) =>
  err instanceof ApiError && err.status === 409 && err.code === AFFINITY_VIOLATION && err.detail.includes('Placement group rule violated')

/** Runs a write; a refusal for a group rule says how to go ahead anyway. */
export async function refusedForGroups<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write()
  } catch (err) {
    if (isGroupViolation(err)) throw withContext(err as ApiError, '', ALLOW_HINT)
    throw err
  }
}

/** Where plain Placement's groups are kept, and the layout that names its racks, rows and rooms. */
export const groupFileFlags = {
  groups: Flags.string({
    description: 'plain OpenStack Placement only: the file that keeps the placement groups (group commands write it back)',
    helpGroup: 'CONNECTION',
  }),
  layout: Flags.string({
    description: 'plain OpenStack Placement only: the topology layout file (racks, rows and rooms)',
    helpGroup: 'CONNECTION',
  }),
}
