/**
 * Many provider-level changes in one transaction: what `placemat apply` and
 * `placemat topology apply` send to a placemat daemon (or run on a file) instead of
 * thousands of Placement calls. Each operation goes through the same domain function
 * as its Placement endpoint, so validation and generations are the same; the first
 * failure aborts the whole batch and nothing is written. (`reshape` lets an online reshape
 * create its new child providers and move inventory onto them in one transaction, which
 * Placement's API cannot.)
 */
import {PlacementError} from './errors.js'
import {setAggregates} from './placement/aggregates.js'
import {editAggregateNames} from './aggregate-names.js'
import {setInventories} from './placement/inventories.js'
import {createProvider, deleteProvider, getProvider, updateProvider} from './placement/providers.js'
import {reshape, type ReshaperBody} from './placement/reshaper.js'
import {refuseNewBreaches} from './groups.js'
import {ensureResourceClass} from './placement/resource-classes.js'
import {ensureTrait, setProviderTraits} from './placement/traits.js'
import type {State} from './state/state.js'
import {applyLayout, type Layout, type TopologyPlan} from './topology.js'

export type BatchOperation =
  | {op: 'ensure_resource_class'; name: string}
  | {op: 'ensure_trait'; name: string}
  | {op: 'create_provider'; uuid: string; name: string; parent_provider_uuid?: string | null}
  | {op: 'update_provider'; uuid: string; name?: string; parent_provider_uuid?: string | null}
  | {op: 'delete_provider'; uuid: string}
  | {op: 'set_inventories'; uuid: string; inventories: Record<string, unknown>; generation?: number}
  | {op: 'set_traits'; uuid: string; traits: string[]; generation?: number}
  | {op: 'set_aggregates'; uuid: string; aggregates: string[]; generation?: number}
  /** Names of aggregates, placemat's own (core/aggregate-names.ts): `names` given, `forget` dropped. */
  | {op: 'set_aggregate_names'; names?: Array<{uuid: string; name: string}>; forget?: string[]}
  /**
   * A layout of racks, rows and rooms, as PUT /placemat/v1/topology/layout takes it (`prune`:
   * whether what it does not name goes; `generation`: the topology's, checked): after the
   * providers of the same batch, so that one file of a datacenter is one transaction.
   */
  | {op: 'apply_layout'; layout: Layout; prune?: boolean; generation?: number}
  /** POST /reshaper's body at `microversion` (1.30 to 1.39): after the creates of the same batch. */
  | ({op: 'reshape'; microversion: string} & ReshaperBody)

/** The minor microversion a reshape operation's body is written for ('1.38' -> 38). */
export const reshapeMinor = (o: {microversion: string}) => Number(o.microversion.split('.')[1])

export interface BatchResult {
  op: BatchOperation['op']
  uuid?: string
  name?: string
  generation?: number
  /** apply_layout: what it changed. */
  plan?: TopologyPlan
}

export interface BatchOptions {
  /** Sees each operation before it runs (a schema check). */
  check?: (o: BatchOperation, i: number) => void
  /** A reshape or a layout may leave members of a placement group breaking its rule. */
  allowViolations?: boolean
}

export function applyBatch(s: State, now: number, operations: BatchOperation[], opts: BatchOptions = {}): BatchResult[] {
  return operations.map((o, i) => applyNumbered(s, now, o, i, opts))
}

/**
 * The same without a result per operation (a batch of millions, whose results nobody reads),
 * over operations made as they are walked; the last one's result is answered (a layout's plan).
 */
export function runBatch(s: State, now: number, operations: Iterable<BatchOperation>, opts: BatchOptions = {}): BatchResult | undefined {
  let i = 0
  let last: BatchResult | undefined
  for (const o of operations) {
    opts.check?.(o, i)
    last = applyNumbered(s, now, o, i++, opts)
  }
  return last
}

/** One operation; a refusal names it by its place in the batch. */
function applyNumbered(s: State, now: number, o: BatchOperation, i: number, opts: BatchOptions): BatchResult {
  try {
    return applyOne(s, now, o, opts)
  } catch (err) {
    if (err instanceof PlacementError) {
      throw new PlacementError(err.status, `operation ${i} (${o.op}${'uuid' in o ? ` ${o.uuid}` : ''}): ${err.detail}`, err.code)
    }
    throw err
  }
}

function applyOne(s: State, now: number, o: BatchOperation, opts: BatchOptions): BatchResult {
  switch (o.op) {
    case 'ensure_resource_class':
      return {op: o.op, name: ensureResourceClass(s, now, o.name).rc.name}
    case 'ensure_trait':
      return {op: o.op, name: ensureTrait(s, now, o.name).trait.name}
    case 'create_provider': {
      const p = createProvider(s, now, o)
      return {op: o.op, uuid: p.uuid, generation: p.generation}
    }
    case 'update_provider': {
      const p = updateProvider(s, now, o.uuid, o, {allowReparenting: true})
      return {op: o.op, uuid: p.uuid, generation: p.generation}
    }
    case 'delete_provider':
      deleteProvider(s, o.uuid)
      return {op: o.op, uuid: o.uuid}
    case 'set_inventories': {
      const generation = o.generation ?? getProvider(s, o.uuid).generation
      const {provider} = setInventories(
        s,
        now,
        o.uuid,
        {resource_provider_generation: generation, inventories: o.inventories},
        {
          reservedCanEqualTotal: true,
        },
      )
      return {op: o.op, uuid: o.uuid, generation: provider.generation}
    }
    case 'set_traits': {
      const generation = o.generation ?? getProvider(s, o.uuid).generation
      const {provider} = setProviderTraits(s, now, o.uuid, {traits: o.traits, resource_provider_generation: generation})
      return {op: o.op, uuid: o.uuid, generation: provider.generation}
    }
    case 'reshape': {
      // Allocations moved to providers of other hosts can break a placement group (POST
      // /reshaper, Placement's own, never refuses for one).
      const placements = new Map(
        Object.entries(o.allocations ?? {}).map(([c, a]) => [c, Object.keys((a as {allocations?: object}).allocations ?? {})]),
      )
      refuseNewBreaches(s, {placements}, opts.allowViolations)
      reshape(s, now, {inventories: o.inventories, allocations: o.allocations}, {consumerTypes: reshapeMinor(o) >= 38})
      return {op: o.op}
    }
    case 'set_aggregates': {
      const generation = o.generation ?? getProvider(s, o.uuid).generation
      const p = setAggregates(s, now, o.uuid, o.aggregates, generation)
      return {op: o.op, uuid: o.uuid, generation: p.generation}
    }
    case 'set_aggregate_names':
      editAggregateNames(s, now, {set: o.names ?? [], forget: o.forget ?? []})
      return {op: o.op}
    case 'apply_layout':
      return {
        op: o.op,
        plan: applyLayout(s, now, o.layout, o.generation, {prune: o.prune !== false, allowViolations: opts.allowViolations}),
      }
  }
}
