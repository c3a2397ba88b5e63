/**
 * The journal's keys: what each journal row names (a leaf module: the backends, the journal and
 * the State's patching all read it).
 */

/** Kinds of key in the journal. */
export const KEY = {
  provider: 'p',
  consumer: 'c',
  resourceClass: 'rc',
  trait: 't',
  topologyNode: 'tn',
  group: 'g',
  /** An aggregate's name (aggregate_names), by aggregate uuid. */
  aggregateName: 'an',
  /** The topology generation (placemat_meta), with an empty key. */
  topologyGeneration: 'tg',
} as const

/** One key a transaction changed, as the journal records it. */
export interface JournalRow {
  seq: number
  kind: string
  key: string
  parts: number
}
