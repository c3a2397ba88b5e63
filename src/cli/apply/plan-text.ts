/** An apply plan in words: the summary line, one line per change, and the --json/--yaml document. */
import type {ApplyPlan} from '../../core/apply-plan/types.js'
import {nonDefaultFields} from '../../core/placement/inventories.js'
import type {Inventory} from '../../core/state/state.js'

export const planIsEmpty = (plan: ApplyPlan) => plan.operationCount === 0

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

export function summaryLine(plan: ApplyPlan): string {
  const s = plan.summary
  if (planIsEmpty(plan)) return 'No changes: everything in the file is up to date.'
  const parts = [`${s.create} to create, ${s.update} to update, ${s.delete} to delete`]
  const extra: string[] = []
  if (s.resource_classes) extra.push(plural(s.resource_classes, 'resource class', 'resource classes'))
  if (s.traits) extra.push(plural(s.traits, 'trait'))
  if (extra.length) parts.push(`${extra.join(' and ')} to create`)
  if (s.aggregate_names) {
    const names = plan.changes.filter((c) => c.kind === 'aggregate_name')
    const dropped = names.filter((c) => c.action === 'delete').length
    const kept = names.length - dropped
    parts.push(
      [kept ? `${plural(kept, 'aggregate name')} to keep` : '', dropped ? `${plural(dropped, 'aggregate name')} to drop` : '']
        .filter(Boolean)
        .join(', '),
    )
  }
  return `Plan: providers ${parts.slice(0, 1).join('')}${parts
    .slice(1)
    .map((p) => `; ${p}`)
    .join('')}.`
}

const fmtInv = (inv: Inventory): string => {
  const extras = nonDefaultFields(inv).map((f) => `${f}=${inv[f]}`)
  return extras.length ? `${inv.total}(${extras.join(',')})` : String(inv.total)
}

/** One line per change: "+" create, "~" update, "-" delete. */
export function planLines(plan: ApplyPlan): string[] {
  return [...planLineStream(plan)]
}

/** The same lines one at a time (a plan of a million changes is printed without holding them all). */
export function* planLineStream(plan: ApplyPlan): Generator<string> {
  const label = (uuid: string | null | undefined) => (uuid ? (plan.labels.get(uuid) ?? uuid) : '(root)')
  for (const change of plan.changes) {
    if (change.kind === 'resource_class') yield `+ resource class ${change.name}`
    else if (change.kind === 'trait') yield `+ trait ${change.name}`
    else if (change.kind === 'aggregate_name') {
      if (change.action === 'create') yield `+ aggregate name ${change.name} ${change.uuid}`
      else if (change.action === 'update') yield `~ aggregate name ${change.uuid}: ${change.from} -> ${change.name}`
      else yield `- aggregate name ${change.name} ${change.uuid}`
    }
    if (change.kind !== 'provider') continue
    const ch = change
    if (ch.action === 'delete') yield `- provider ${ch.name} ${ch.uuid}`
    else if (ch.action === 'create') {
      const d = ch.create!
      const parts = [`+ provider ${d.name} ${d.uuid}`]
      if (d.parent) parts.push(`parent=${label(d.parent)}`)
      const inv = Object.entries(d.inventories ?? ({} as Record<string, Inventory>))
      if (inv.length) parts.push(`inventories=${inv.map(([rc, i]) => `${rc}:${fmtInv(i)}`).join(',')}`)
      if (d.traits?.length) parts.push(`traits=${d.traits.join(',')}`)
      if (d.aggregates?.length) parts.push(`aggregates=${d.aggregates.map(label).join(',')}`)
      yield parts.join(' ')
    } else {
      const parts: string[] = []
      if (ch.rename) parts.push(`name ${ch.rename.from} -> ${ch.rename.to}`)
      if (ch.parent) parts.push(`parent ${label(ch.parent.from)} -> ${label(ch.parent.to)}`)
      if (ch.inventories) {
        const i = ch.inventories
        for (const [rc, inv] of Object.entries(i.added)) parts.push(`+${rc}:${fmtInv(inv)}`)
        for (const rc of i.removed) parts.push(`-${rc}`)
        for (const [rc, fields] of Object.entries(i.changed)) {
          parts.push(
            `${rc} ${Object.entries(fields)
              .map(([f, [a, b]]) => `${f} ${a} -> ${b}`)
              .join(', ')}`,
          )
        }
      }
      if (ch.traits) parts.push(`traits ${[...ch.traits.added.map((t) => `+${t}`), ...ch.traits.removed.map((t) => `-${t}`)].join(' ')}`)
      if (ch.aggregates) {
        parts.push(
          `aggregates ${[...ch.aggregates.added.map((a) => `+${label(a)}`), ...ch.aggregates.removed.map((a) => `-${label(a)}`)].join(' ')}`,
        )
      }
      yield `~ provider ${ch.name} ${ch.uuid}: ${parts.join('; ')}`
    }
  }
}

/** The plan as --json/--yaml print it (no internals). */
export function planDocument(plan: ApplyPlan) {
  return {
    summary: plan.summary,
    changes: plan.changes.map((c) => {
      if (c.kind !== 'provider' || !c.create) return c
      const {create, ...rest} = c
      return {
        ...rest,
        parent_provider_uuid: create.parent ?? null,
        inventories: create.inventories,
        traits: create.traits,
        aggregates: create.aggregates,
      }
    }),
  }
}
