/** Kept for imports not yet moved: the records live in core/wire.ts, the reads in cli/backend. */
export {PLACEMAT_API, type CloudView} from '../backend/backend.js'
export type {ConsumerRecord as ConsumerState, ProviderRecord as ProviderState} from '../../core/wire.js'
export type {Inventory as FullInventory} from '../../core/state.js'
