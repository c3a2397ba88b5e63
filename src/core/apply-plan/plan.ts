/**
 * Compares an apply file with a State and returns the changes and the operations that
 * make them, in order: classes and traits, renames, creates (parents first), re-parenting
 * (shallowest first), inventories/traits/aggregates, deletes (deepest first). Refuses
 * (ApplyRefused, every problem listed) what cannot be applied; changes nothing.
 */
import type {BatchOperation} from '../batch.js'
import type {State} from '../state.js'
import {providerChanges} from './changes.js'
import {resolveDesired} from './desired.js'
import {byLevel, finalDepths, orderRenames, pruned} from './tree.js'
import {ApplyRefused, type ApplyFile, type ApplyPlan, type NameChange, type ProviderChange} from './types.js'

export function planApply(file: ApplyFile, s: State, opts: {prune: boolean}): ApplyPlan {
  const errors: string[] = []
  const r = resolveDesired(file, s, errors)
  const {finalParent, depth} = finalDepths(s, r.desired, r.labels, errors)
  const {changes, creates, renames, reparents} = providerChanges(s, r.desired, errors)
  const renameOrder = orderRenames(s, renames, errors)
  const prune = opts.prune ? pruned(s, r.desired, finalParent, errors) : {deletes: [], depth: new Map<string, number>()}
  for (const p of prune.deletes) changes.push({action: 'delete', kind: 'provider', uuid: p.uuid, name: p.name})
  if (errors.length) throw new ApplyRefused(errors, errors.some((e) => e.includes('allocations')))

  const classes = [...r.neededClasses].filter((c) => !s.classes.has(c)).sort()
  const traits = [...r.neededTraits].filter((t) => !s.traits.has(t)).sort()
  const names: BatchOperation[] = [
    ...classes.map((name) => ({op: 'ensure_resource_class' as const, name})),
    ...traits.map((name) => ({op: 'ensure_trait' as const, name})),
  ]
  const renameOps: BatchOperation[] = renameOrder.map(({d}) => ({
    op: 'update_provider',
    uuid: d.uuid,
    name: d.name,
    parent_provider_uuid: s.providers.get(d.uuid)!.parent,
  }))
  const createOps = byLevel(creates, (d) => depth.get(d.uuid)!).map((level) =>
    level.map((d): BatchOperation => ({op: 'create_provider', uuid: d.uuid, name: d.name, parent_provider_uuid: d.parent ?? null})),
  )
  reparents.sort((a, b) => depth.get(a.uuid)! - depth.get(b.uuid)!)
  const reparentOps: BatchOperation[] = reparents.map((d) => ({op: 'update_provider', uuid: d.uuid, name: d.name, parent_provider_uuid: d.parent ?? null}))
  const writes = changes.flatMap((ch) => {
    const ops = ch.action === 'delete' ? [] : providerWrites(s, ch, ch.create ?? r.desired[r.byUuid.get(ch.uuid)!])
    return ops.length ? [ops] : []
  })
  const deleteOps = byLevel(prune.deletes, (p) => prune.depth.get(p.uuid)!, true).map((level) =>
    level.map((p): BatchOperation => ({op: 'delete_provider', uuid: p.uuid})),
  )
  const stages = {names, renames: renameOps, creates: createOps, reparents: reparentOps, writes, deletes: deleteOps}
  const nameChanges: NameChange[] = [
    ...classes.map((name) => ({action: 'create' as const, kind: 'resource_class' as const, name})),
    ...traits.map((name) => ({action: 'create' as const, kind: 'trait' as const, name})),
  ]
  return {
    summary: {
      create: creates.length,
      update: changes.filter((c) => c.action === 'update').length,
      delete: prune.deletes.length,
      resource_classes: classes.length,
      traits: traits.length,
    },
    changes: [...nameChanges, ...changes],
    ops: [...names, ...renameOps, ...createOps.flat(), ...reparentOps, ...writes.flat(), ...deleteOps.flat()],
    stages,
    labels: r.labels,
  }
}

/** One provider's inventory, trait and aggregate writes; the first to an existing provider carries the generation the plan was made on. */
function providerWrites(s: State, ch: ProviderChange, d: NonNullable<ProviderChange['create']>): BatchOperation[] {
  let generation: number | undefined = s.providers.get(ch.uuid)?.generation
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
  if (d.aggregates && (isNew ? d.aggregates.length : ch.aggregates)) ops.push({op: 'set_aggregates', uuid: d.uuid, aggregates: d.aggregates, ...gen()})
  return ops
}
