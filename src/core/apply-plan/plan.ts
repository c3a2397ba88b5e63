/**
 * Compares an apply file with a State and returns the changes and the operations that
 * make them, in order: classes and traits, renames, creates (parents first), re-parenting
 * (shallowest first), inventories/traits/aggregates, deletes (deepest first); the operations
 * are made when they are walked. Refuses
 * (ApplyRefused, every problem listed) what cannot be applied; changes nothing.
 */
import type {BatchOperation} from '../batch.js'
import type {State} from '../state/state.js'
import {providerChanges} from './changes.js'
import {resolveDesired} from './desired.js'
import {byLevel, finalDepths, orderRenames, pruned} from './tree.js'
import {
  ApplyRefused,
  type AggregateNameChange,
  type ApplyFile,
  type ApplyPlan,
  type Desired,
  type NameChange,
  type ProviderChange,
  type Stages,
} from './types.js'
import {aggregateNameEdit, isEmptyEdit, type AggregateNameEdit} from '../aggregate-names.js'

export interface ApplyOptions {
  /** Delete the providers the file does not name (and forget the names of aggregates it does not name). */
  prune: boolean
  /** Keep the names the file gives aggregates (placemat: a daemon or --db; plain Placement cannot). */
  keepAggregateNames?: boolean
}

export function planApply(file: ApplyFile, s: State, opts: ApplyOptions): ApplyPlan {
  const errors: string[] = []
  const r = resolveDesired(file, s, errors)
  const {finalParent, depth} = finalDepths(s, r.desired, r.labels, errors)
  const {changes, creates, renames, reparents} = providerChanges(s, r.desired, errors)
  const renameOrder = orderRenames(s, renames, errors)
  const prune = opts.prune ? pruned(s, r.desired, finalParent, errors) : {deletes: [], depth: new Map<string, number>()}
  for (const p of prune.deletes) changes.push({action: 'delete', kind: 'provider', uuid: p.uuid, name: p.name})
  if (errors.length)
    throw new ApplyRefused(
      errors,
      errors.some((e) => e.includes('allocations')),
    )

  const classes = [...r.neededClasses].filter((c) => !s.classes.has(c)).sort()
  const traits = [...r.neededTraits].filter((t) => !s.traits.has(t)).sort()
  const nameEdit: AggregateNameEdit = opts.keepAggregateNames ? aggregateNameEdit(s, r.aggregateNames, opts.prune) : {set: [], forget: []}
  const names: BatchOperation[] = [
    ...classes.map((name) => ({op: 'ensure_resource_class' as const, name})),
    ...traits.map((name) => ({op: 'ensure_trait' as const, name})),
    ...(isEmptyEdit(nameEdit) ? [] : [{op: 'set_aggregate_names' as const, names: nameEdit.set, forget: nameEdit.forget}]),
  ]
  const renameOps: BatchOperation[] = renameOrder.map(({d}) => ({
    op: 'update_provider',
    uuid: d.uuid,
    name: d.name,
    parent_provider_uuid: s.providers.get(d.uuid)!.parent,
  }))
  reparents.sort((a, b) => depth.get(a.uuid)! - depth.get(b.uuid)!)
  // What the operations are made from when they are walked: the plan holds its changes, not
  // their operations (four for each new provider), and none of it refers to the State.
  const made: PlanSource = {
    names,
    renames: renameOps,
    creates: byLevel(creates, (d) => depth.get(d.uuid)!),
    reparents,
    writes: changes.flatMap((ch): ProviderWrites[] => {
      if (ch.action === 'delete') return []
      const d = ch.create ?? r.desired[r.byUuid.get(ch.uuid)!]
      return [{ch, d, generation: s.providers.get(ch.uuid)?.generation}]
    }),
    deletes: byLevel(prune.deletes, (p) => prune.depth.get(p.uuid)!, true).map((level) => level.map((p) => p.uuid)),
  }
  const nameChanges: NameChange[] = [
    ...classes.map((name) => ({action: 'create' as const, kind: 'resource_class' as const, name})),
    ...traits.map((name) => ({action: 'create' as const, kind: 'trait' as const, name})),
  ]
  const aggregateNameChanges = nameChangesOf(s, nameEdit)
  let operationCount = 0
  for (const _ of operationsOf(made)) operationCount++
  return {
    summary: {
      create: creates.length,
      update: changes.filter((c) => c.action === 'update').length,
      delete: prune.deletes.length,
      resource_classes: classes.length,
      traits: traits.length,
      aggregate_names: aggregateNameChanges.length,
    },
    changes: [...nameChanges, ...aggregateNameChanges, ...changes],
    operationCount,
    operations: () => operationsOf(made),
    stages: () => stagesOf(made),
    labels: r.labels,
    namedAggregates: r.aggregateNames.size,
  }
}

/** The edit as an operator reads it: names given or changed, and those dropped (forgotten, or taken by another aggregate). */
function nameChangesOf(s: State, edit: AggregateNameEdit): AggregateNameChange[] {
  const out: AggregateNameChange[] = []
  const renamed = new Set(edit.set.map((e) => e.uuid))
  const holder = new Map([...s.aggregateNames.values()].map((n) => [n.name, n.uuid]))
  for (const {uuid, name} of edit.set) {
    const from = s.aggregateNames.get(uuid)?.name
    out.push(
      from === undefined
        ? {action: 'create', kind: 'aggregate_name', uuid, name}
        : {action: 'update', kind: 'aggregate_name', uuid, name, from},
    )
    const held = holder.get(name)
    if (held !== undefined && held !== uuid && !renamed.has(held)) out.push({action: 'delete', kind: 'aggregate_name', uuid: held, name})
  }
  for (const uuid of edit.forget) out.push({action: 'delete', kind: 'aggregate_name', uuid, name: s.aggregateNames.get(uuid)?.name ?? ''})
  return out
}

/** One provider's writes: what it must become, and the generation it had when planned (none for a new one). */
interface ProviderWrites {
  ch: ProviderChange
  d: Desired
  generation: number | undefined
}

interface PlanSource {
  names: BatchOperation[]
  renames: BatchOperation[]
  creates: Desired[][]
  reparents: Desired[]
  writes: ProviderWrites[]
  deletes: string[][]
}

const createOp = (d: Desired): BatchOperation => ({
  op: 'create_provider',
  uuid: d.uuid,
  name: d.name,
  parent_provider_uuid: d.parent ?? null,
})
const reparentOp = (d: Desired): BatchOperation => ({
  op: 'update_provider',
  uuid: d.uuid,
  name: d.name,
  parent_provider_uuid: d.parent ?? null,
})
const deleteOp = (uuid: string): BatchOperation => ({op: 'delete_provider', uuid})

function* operationsOf(m: PlanSource): Generator<BatchOperation> {
  yield* m.names
  yield* m.renames
  for (const level of m.creates) for (const d of level) yield createOp(d)
  for (const d of m.reparents) yield reparentOp(d)
  for (const w of m.writes) yield* providerWrites(w)
  for (const level of m.deletes) for (const uuid of level) yield deleteOp(uuid)
}

function stagesOf(m: PlanSource): Stages {
  return {
    names: m.names,
    renames: m.renames,
    creates: m.creates.map((level) => level.map(createOp)),
    reparents: m.reparents.map(reparentOp),
    writes: m.writes.map(providerWrites).filter((ops) => ops.length),
    deletes: m.deletes.map((level) => level.map(deleteOp)),
  }
}

/** One provider's inventory, trait and aggregate writes; the first to an existing provider carries the generation the plan was made on. */
function providerWrites({ch, d, generation}: ProviderWrites): BatchOperation[] {
  const gen = () => {
    const g = generation
    generation = undefined
    return g === undefined ? {} : {generation: g}
  }
  const isNew = ch.action === 'create'
  const ops: BatchOperation[] = []
  if (d.inventories && (isNew ? Object.keys(d.inventories).length : ch.inventories)) {
    ops.push({op: 'set_inventories', uuid: d.uuid, inventories: d.inventories, ...gen()})
  }
  if (d.traits && (isNew ? d.traits.length : ch.traits)) ops.push({op: 'set_traits', uuid: d.uuid, traits: d.traits, ...gen()})
  if (d.aggregates && (isNew ? d.aggregates.length : ch.aggregates))
    ops.push({op: 'set_aggregates', uuid: d.uuid, aggregates: d.aggregates, ...gen()})
  return ops
}
