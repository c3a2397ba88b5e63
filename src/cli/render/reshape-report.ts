/**
 * The report of `placemat reshape`, and how it reads as text: the new providers, the trees
 * before and after, the allocations that move, the conflicts, and the outcome.
 */
import {breachText, type BreachRecord} from '../../core/groups.js'
import {INVENTORY_DEFAULTS} from '../../core/placement/inventories.js'
import type {ErrorCodeValue} from '../../core/errors.js'
import type {ProviderCreate} from '../../core/reshape/compiled.js'
import type {Conflict, ConsumerMove} from '../../core/reshape/check.js'
import type {InventoryView, ProviderView} from '../../core/reshape/views.js'
import type {ReshaperBody} from '../../core/placement/reshaper.js'

function inventoryLine(rc: string, v: InventoryView): string {
  const extras: string[] = []
  if (v.reserved) extras.push(`reserved ${v.reserved}`)
  if (v.allocation_ratio !== 1) extras.push(`ratio ${v.allocation_ratio}`)
  if (v.min_unit !== 1) extras.push(`min ${v.min_unit}`)
  if (v.max_unit !== INVENTORY_DEFAULTS.max_unit) extras.push(`max ${v.max_unit}`)
  if (v.step_size !== 1) extras.push(`step ${v.step_size}`)
  const over = v.used > v.capacity ? '  OVER CAPACITY' : ''
  return `${rc.padEnd(18)} ${`${v.used}/${v.capacity}`.padStart(13)}  total ${v.total}${extras.length ? `, ${extras.join(', ')}` : ''}${over}`
}

export function renderTree(list: ProviderView[]): string[] {
  const lines: string[] = []
  for (const p of list) {
    const pad = '  '.repeat(p.depth)
    lines.push(`${pad}${p.name}  ${p.uuid}  generation ${p.generation}${p.created ? '  (new)' : ''}`)
    const rcs = Object.keys(p.inventories).sort()
    if (!rcs.length) lines.push(`${pad}    (no inventory)`)
    for (const rc of rcs) lines.push(`${pad}    ${inventoryLine(rc, p.inventories[rc])}`)
  }
  return lines
}

export interface ReshapeReport {
  plan: 'moves' | 'body'
  dry_run: boolean
  applied: boolean
  /** The plan's moves were all in place already (a plan run again): nothing was done, nothing needed. */
  done?: boolean
  transaction: 'offline' | 'online'
  creates: ProviderCreate[]
  body: ReshaperBody
  microversion: string
  before: ProviderView[]
  after: ProviderView[] | null
  moves: ConsumerMove[]
  conflicts: Conflict[]
  /** The first error the check on a copy of the state found, as Placement would send it. */
  error: {status: number; detail: string; code: ErrorCodeValue} | null
  attempts: number
  /** Once applied: whether the new providers and the reshape were one transaction (false: plain Placement, two steps). */
  atomic?: boolean
  /** Dry run on placemat: the placement groups the moved allocations would break. */
  group_violations?: BreachRecord[]
}

export function renderReport(r: ReshapeReport): string {
  if (r.done) return 'Already done: every move of the plan is in place. Nothing was changed.'
  const name = (uuid: string | null) => {
    if (!uuid) return '-'
    return (
      r.before.find((p) => p.uuid === uuid)?.name ??
      r.after?.find((p) => p.uuid === uuid)?.name ??
      r.creates.find((c) => c.uuid === uuid)?.name ??
      uuid
    )
  }
  const out: string[] = []
  const how =
    r.atomic === undefined ? r.transaction : `${r.transaction}, ${r.atomic ? 'one transaction' : 'new providers first, then the reshape'}`
  out.push(
    `${r.dry_run ? 'Dry run' : 'Reshape'} (${how}): ${r.plan === 'moves' ? 'move plan' : 'reshaper body'}, microversion ${r.microversion}`,
  )
  if (r.creates.length) {
    out.push('', 'New providers:')
    for (const c of r.creates) out.push(`  + ${c.name}  ${c.uuid}  under ${name(c.parent_provider_uuid)}`)
  }
  out.push('', 'Before:', ...renderTree(r.before).map((l) => `  ${l}`))
  out.push('', 'After:')
  if (r.after) out.push(...renderTree(r.after).map((l) => `  ${l}`))
  else out.push('  (the reshape would fail; nothing would change)')
  out.push('', 'Allocations that move:')
  if (!r.moves.length) out.push('  none')
  for (const m of r.moves) out.push(`  ${m.consumer}  ${m.resource_class}:${m.amount}  ${name(m.from)} -> ${name(m.to)}`)
  out.push('', 'Conflicts:')
  if (!r.conflicts.length) out.push('  none')
  for (const c of r.conflicts) out.push(`  ${c.kind}: ${c.message}`)
  for (const v of r.group_violations ?? []) out.push(`  ! breaks ${breachText(v)}`)
  out.push('')
  if (r.dry_run)
    out.push(
      r.error ? `The reshape would fail: ${r.error.status} ${r.error.detail}` : 'The reshape would succeed. Nothing was changed (dry run).',
    )
  else if (r.applied) out.push(`Reshaped${r.attempts > 1 ? ` (after ${r.attempts} attempts)` : ''}.`)
  return out.join('\n')
}
