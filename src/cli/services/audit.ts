/**
 * `placemat audit`: what is wrong in a placement database, as nova-manage placement audit
 * and an operator's own checks would find it:
 *  - orphan allocations: consumers holding allocations that are not in the list of
 *    consumers the operator knows (instances, migrations, ...);
 *  - providers whose usage exceeds their capacity (possible after an inventory was lowered,
 *    which Placement allows) or that use a class they have no inventory of;
 *  - consumers without allocations (placemat endpoints only: the standard API cannot list them);
 *  - consumers with an incomplete project or user (Placement's placeholder
 *    00000000-0000-0000-0000-000000000000 for writes made before microversion 1.8, or none);
 *  - placement groups whose rule is broken where their members are now (placemat only).
 */
import YAML from 'yaml'
import {ApiError, type PlacementClient} from '../../client/client.js'
import {capacityOf} from '../../core/inventory-capacity.js'
import type {BreachRecord, GroupRecord} from '../../core/groups.js'
import type {ConsumerRecord as ConsumerState} from '../../core/wire.js'
import type {CloudView} from '../backend/backend.js'
import {canonicalUuid as canonical, isUuidLike} from '../../core/uuids.js'
import {mapLimit} from '../../client/map-limit.js'
import {readText} from '../formats/document.js'
import {usageError} from '../failure.js'

/** Placement 8.0.0's default incomplete_consumer_project_id / incomplete_consumer_user_id. */
export const INCOMPLETE_ID = '00000000-0000-0000-0000-000000000000'

export type Finding =
  | {
      kind: 'orphan_allocations'
      consumer: string
      project_id?: string
      user_id?: string
      allocations: Record<string, {resources: Record<string, number>}>
      deleted?: boolean
      error?: string
    }
  | {
      kind: 'over_capacity'
      provider: string
      name: string
      resource_class: string
      used: number
      capacity: number
      total: number
      reserved: number
      allocation_ratio: number
    }
  | {kind: 'empty_consumer'; consumer: string; project_id?: string; user_id?: string}
  | {kind: 'incomplete_consumer'; consumer: string; project_id?: string; user_id?: string; missing: ('project' | 'user')[]}
  | ({kind: 'group_violation'} & BreachRecord)

export type FindingKind = Finding['kind']
export const FINDING_KINDS: FindingKind[] = [
  'orphan_allocations',
  'over_capacity',
  'empty_consumer',
  'incomplete_consumer',
  'group_violation',
]

/** Reads the known consumers: one uuid per line (# comments), or a JSON/YAML list. "-" is stdin. */
export function readKnownConsumers(file: string): Set<string> {
  const text = readText(file)
  let items: unknown[] | undefined
  const trimmed = text.trim()
  if (trimmed.startsWith('[') || trimmed.startsWith('-') || trimmed.startsWith('{')) {
    try {
      const data = YAML.parse(text)
      if (Array.isArray(data)) items = data
      else if (data && typeof data === 'object' && Array.isArray((data as {consumers?: unknown}).consumers)) {
        items = (data as {consumers: unknown[]}).consumers
      }
    } catch {
      // not YAML: lines
    }
    if (!items) throw usageError(`${file}: expected one consumer uuid per line, or a JSON/YAML list of uuids`)
  }
  const out = new Set<string>()
  const bad: string[] = []
  if (items) {
    items.forEach((v, i) => {
      if (typeof v === 'string' && isUuidLike(v.trim())) out.add(canonical(v.trim()))
      else bad.push(`item ${i + 1}: ${JSON.stringify(v)}`)
    })
  } else {
    text.split(/\r?\n/).forEach((line, i) => {
      const s = line.replace(/#.*$/, '').trim()
      if (!s) return
      if (isUuidLike(s)) out.add(canonical(s))
      else bad.push(`line ${i + 1}: ${s}`)
    })
  }
  if (bad.length) {
    throw usageError(`${file}: not consumer uuids: ${bad.slice(0, 5).join('; ')}${bad.length > 5 ? ` (and ${bad.length - 5} more)` : ''}`)
  }
  return out
}

export interface AuditResult {
  findings: Finding[]
  checked: {providers: number; consumers: number; orphans_checked: boolean; empty_consumers_checked: boolean}
}

export function audit(view: CloudView, known: Set<string> | undefined, groups: GroupRecord[] = []): AuditResult {
  // Consumers that hold nothing can be found only where every record is listed.
  const listsConsumers = view.everyConsumer === true
  const findings: Finding[] = []
  const consumers = [...(view.consumers?.values() ?? [])].sort((a, b) => (a.uuid < b.uuid ? -1 : 1))
  const hasAllocations = (c: ConsumerState) => Object.values(c.allocations).some((a) => Object.keys(a.resources ?? {}).length > 0)
  if (known) {
    for (const c of consumers) {
      if (!hasAllocations(c)) continue
      const id = isUuidLike(c.uuid) ? canonical(c.uuid) : c.uuid
      if (!known.has(id)) {
        findings.push({
          kind: 'orphan_allocations',
          consumer: c.uuid,
          project_id: c.project_id,
          user_id: c.user_id,
          allocations: c.allocations,
        })
      }
    }
  }
  const providers = [...view.providers.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const p of providers) {
    for (const [rc, used] of Object.entries(p.usages).sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (!used) continue
      const inv = p.inventories[rc]
      const cap = inv ? capacityOf(inv) : 0
      if (used > cap) {
        findings.push({
          kind: 'over_capacity',
          provider: p.uuid,
          name: p.name,
          resource_class: rc,
          used,
          capacity: cap,
          total: inv?.total ?? 0,
          reserved: inv?.reserved ?? 0,
          allocation_ratio: inv?.allocation_ratio ?? 0,
        })
      }
    }
  }
  for (const c of consumers) {
    if (!hasAllocations(c) && listsConsumers) {
      findings.push({kind: 'empty_consumer', consumer: c.uuid, project_id: c.project_id, user_id: c.user_id})
    }
  }
  for (const c of consumers) {
    if (!hasAllocations(c)) continue
    const missing: ('project' | 'user')[] = []
    if (!c.project_id || c.project_id === INCOMPLETE_ID) missing.push('project')
    if (!c.user_id || c.user_id === INCOMPLETE_ID) missing.push('user')
    if (missing.length)
      findings.push({kind: 'incomplete_consumer', consumer: c.uuid, project_id: c.project_id, user_id: c.user_id, missing})
  }
  for (const g of groups) for (const v of g.violations) findings.push({kind: 'group_violation', ...v})
  return {
    findings,
    checked: {
      providers: view.providers.size,
      consumers: consumers.length,
      orphans_checked: Boolean(known),
      empty_consumers_checked: listsConsumers,
    },
  }
}

/** DELETE /allocations/{consumer} for each orphan finding; marks each deleted or failed. */
export async function deleteOrphans(
  client: PlacementClient,
  findings: Finding[],
  concurrency = 8,
): Promise<{deleted: number; failed: number}> {
  const orphans = findings.filter((f): f is Extract<Finding, {kind: 'orphan_allocations'}> => f.kind === 'orphan_allocations')
  let deleted = 0
  let failed = 0
  await mapLimit(orphans, concurrency, async (f) => {
    try {
      await client.delete(`/allocations/${encodeURIComponent(f.consumer)}`)
      f.deleted = true
      deleted++
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        // Gone in the meantime: nothing left to delete.
        f.deleted = true
        deleted++
        return
      }
      f.error = err instanceof ApiError ? `${err.status}: ${err.detail}` : (err as Error).message
      failed++
    }
  })
  return {deleted, failed}
}

const fmtResources = (r: Record<string, number>) =>
  Object.entries(r)
    .map(([rc, n]) => `${rc}=${n}`)
    .join(',')

export interface FindingRow {
  kind: string
  subject: string
  detail: string
}

/** One table row per finding. */
export function findingRows(findings: Finding[], view: CloudView): FindingRow[] {
  const name = (uuid: string) => view.providers.get(uuid)?.name ?? uuid
  return findings.map((f) => {
    switch (f.kind) {
      case 'orphan_allocations': {
        const where = Object.entries(f.allocations)
          .map(([rp, a]) => `${fmtResources(a.resources)} on ${name(rp)}`)
          .join('; ')
        const state = f.deleted ? ' [deleted]' : f.error ? ` [delete failed: ${f.error}]` : ''
        return {kind: 'orphan', subject: f.consumer, detail: `${where}${f.project_id ? ` (project ${f.project_id})` : ''}${state}`}
      }
      case 'over_capacity':
        return {
          kind: 'over-capacity',
          subject: `${f.name} ${f.provider}`,
          detail: `${f.resource_class} used ${f.used} > capacity ${f.capacity} (total ${f.total}, reserved ${f.reserved}, ratio ${f.allocation_ratio})`,
        }
      case 'empty_consumer':
        return {kind: 'empty-consumer', subject: f.consumer, detail: 'consumer record without allocations'}
      case 'incomplete_consumer':
        return {
          kind: 'incomplete',
          subject: f.consumer,
          detail: `no real ${f.missing.join(' or ')} (project ${f.project_id ?? '-'}, user ${f.user_id ?? '-'})`,
        }
      case 'group_violation':
        return {
          kind: 'group',
          subject: `${f.group} (${f.rule})`,
          detail: `${f.why}: ${f.domains.map((d) => `${d.name}: ${d.members.join(', ')}`).join('; ')}`,
        }
    }
  })
}

/** Counts per kind (all kinds present, 0 when none). */
export function countByKind(findings: Finding[]): Record<FindingKind, number> {
  const out = Object.fromEntries(FINDING_KINDS.map((k) => [k, 0])) as Record<FindingKind, number>
  for (const f of findings) out[f.kind]++
  return out
}
