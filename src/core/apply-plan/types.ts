/**
 * `placemat apply`'s plan: the providers a file declares compared with a State, as the
 * changes an operator reads and the batch operations that make them.
 */
import type {BatchOperation} from '../batch.js'
import type {Inventory} from '../state/state.js'

export type InventoryField = keyof Inventory

/** One provider as the file declares it (names not yet resolved). */
export interface DeclaredProvider {
  /** Where in the file (for messages). */
  where: string
  name: string
  uuid?: string
  /** uuid or name; null: a root; undefined: not managed. */
  parentRef?: string | null
  /** Index (in the flat list) of the provider it is nested under. */
  parentIndex?: number
  inventories?: Record<string, Inventory>
  traits?: string[]
  aggregates?: string[]
}

/** A whole apply file, its shape already checked. */
export interface ApplyFile {
  resourceClasses: string[]
  traits: string[]
  aggregateNames: Map<string, string>
  /** Depth-first, parents before their nested children. */
  providers: DeclaredProvider[]
}

/** A provider as it must be after the apply (keys left out are not managed). */
export interface Desired {
  uuid: string
  name: string
  parent?: string | null
  inventories?: Record<string, Inventory>
  traits?: string[]
  /** Traits the compute service owns (COMPUTE_*) that the file removes by naming them `!TRAIT`. */
  traitsRemoved?: string[]
  aggregates?: string[]
}

export interface InventoryDiff {
  added: Record<string, Inventory>
  removed: string[]
  changed: Record<string, Partial<Record<InventoryField, [number, number]>>>
}

export interface SetDiff {
  added: string[]
  removed: string[]
}

export interface ProviderChange {
  action: 'create' | 'update' | 'delete'
  kind: 'provider'
  uuid: string
  name: string
  rename?: {from: string; to: string}
  parent?: {from: string | null; to: string | null}
  inventories?: InventoryDiff
  traits?: SetDiff
  aggregates?: SetDiff
  /** Only for create: the whole provider. */
  create?: Desired
}

export interface NameChange {
  action: 'create'
  kind: 'resource_class' | 'trait'
  name: string
}

/** A name placemat keeps for an aggregate (core/aggregate-names.ts): given, changed or dropped. */
export interface AggregateNameChange {
  action: 'create' | 'update' | 'delete'
  kind: 'aggregate_name'
  uuid: string
  name: string
  /** An update: the name it had. */
  from?: string
}

export type Change = NameChange | AggregateNameChange | ProviderChange

/** The operations by stage. Levels run one after another; operations in one level are independent, except one provider's writes, which chain its generation. */
export interface Stages {
  names: BatchOperation[]
  renames: BatchOperation[]
  creates: BatchOperation[][]
  reparents: BatchOperation[]
  writes: BatchOperation[][]
  deletes: BatchOperation[][]
}

export interface ApplyPlan {
  summary: {create: number; update: number; delete: number; resource_classes: number; traits: number; aggregate_names: number}
  changes: Change[]
  /** How many operations the plan makes. */
  operationCount: number
  /**
   * The operations in the order they must run, made one at a time as they are walked: a
   * million new providers are four million operations, which the plan never holds at once.
   */
  operations(): Iterable<BatchOperation>
  /** The same operations by stage, made when asked. */
  stages(): Stages
  /** uuid -> name, for rendering (aggregate names from the file, provider names). */
  labels: Map<string, string>
  /** How many aggregates the file names (kept by placemat; plain Placement has nowhere to keep them). */
  namedAggregates: number
}

/** The file cannot be applied to this state: every problem found, at once. */
export class ApplyRefused extends Error {
  constructor(
    readonly problems: string[],
    /** Some problem is about allocations (a conflict with what consumers hold), not the file. */
    readonly allocationConflict: boolean,
  ) {
    super(`the file cannot be applied (nothing was changed):\n${ApplyRefused.list(problems)}`)
    this.name = 'ApplyRefused'
  }

  static list(problems: string[]): string {
    const shown = problems.slice(0, 20).map((e) => `  ${e}`)
    if (problems.length > 20) shown.push(`  ... and ${problems.length - 20} more`)
    return shown.join('\n')
  }
}
