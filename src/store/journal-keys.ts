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

/** The provider parts a key may name (core/state/changes.ts PART: row, generation, inventories, traits, aggregates, created). */
const KNOWN_PARTS = 0b111111

const KINDS = new Set<string>(Object.values(KEY))

/**
 * Whether this release knows what `k` names: its kind, and for a provider its parts. A key a newer
 * release wrote (a kind or a part added since) is never applied as if it were known: the node
 * loads the State whole instead (follower.ts), and an image holding one is not used.
 */
export function knownKey(k: Pick<JournalRow, 'kind' | 'parts'>): boolean {
  if (!KINDS.has(k.kind)) return false
  if (!Number.isInteger(k.parts) || k.parts < 0) return false
  return k.kind === KEY.provider ? (k.parts & ~KNOWN_PARTS) === 0 : k.parts === 0
}

/**
 * How an image (placemat_change_images.format, migration 0013) lays out its body: 1, the JSON
 * `{"keys": [[kind, key, parts], ...], "rows": {kind: [row, ...]}}` every release so far writes.
 * A node reads only images of this format (others: the rows their keys name, journal.ts).
 */
export const IMAGE_FORMAT = 1

/** Transactions a keyed write's check reads at most (Backend.commitKeyed); a writer further behind is refused (it catches up first). */
export const GUARD_RANGE = 2000

/**
 * The kinds of row a transaction's image holds (state-writer.ts imageRows), which a follower reads
 * back into a window of changes (journal.ts Window): listed once.
 */
export const IMAGE_ROW_KINDS = [
  'providers',
  'inventories',
  'traits',
  'aggregates',
  'consumers',
  'allocations',
  'classes',
  'traitNames',
  'topologyNodes',
  'groups',
  'groupMembers',
  'moved',
  'aggregateNames',
] as const

export type ImageRowKind = (typeof IMAGE_ROW_KINDS)[number]
