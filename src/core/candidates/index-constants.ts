/** The index's markers, a leaf that the index and its patcher both read. */
import type {Provider} from '../state/state.js'

/** Stands, in the index, for a provider deleted since the index was built (never mutated). */
export const GONE: Provider = {
  uuid: '',
  name: '',
  seq: 0,
  generation: 0,
  parent: null,
  root: '',
  createdAt: 0,
  updatedAt: 0,
  inventories: new Map(),
  traits: new Set(),
  aggregates: new Set(),
  children: new Set(),
  usages: new Map(),
  allocations: new Map(),
}

/** The members of a tree that is no more. */
export const NO_MEMBERS = new Int32Array(0)
