/**
 * `placemat db check`: Placement-style upgrade checks on the data of a placemat database, made on
 * the database directly, without a daemon (a SQLite file, a PostgreSQL URL or a MariaDB one).
 */
import {sql, type RawBuilder} from 'kysely'
import {INCOMPLETE_CONSUMER_ID} from '../../../core/placement/allocations.js'
import {capacityOf} from '../../../core/inventory-capacity.js'
import type {Database} from '../../../store/schema.js'
import {isDatabaseUrl} from '../../../store/target.js'
import {inspect} from './inspect.js'
import {DbExit, dbStatus} from './status.js'

export type CheckCode = 'success' | 'warning' | 'failure'

export interface CheckResult {
  name: string
  result: CheckCode
  details: string[]
}

const LIMIT = 20
function result(name: string, code: CheckCode, problems: string[], hint?: string): CheckResult {
  if (!problems.length) return {name, result: 'success', details: []}
  const details = problems.slice(0, LIMIT)
  if (problems.length > LIMIT) details.push(`... and ${problems.length - LIMIT} more`)
  if (hint) details.push(hint)
  return {name, result: code, details}
}

/**
 * Placement's `placement-status upgrade check` (missing root provider ids, incomplete
 * consumers) and the other checks that make sense on a placemat file: the schema, the
 * SQLite integrity check, the provider trees, rows pointing at nothing, inventories and
 * allocations that break Placement's rules, and allocations over capacity.
 */
export async function dbCheck(file: string): Promise<CheckResult[]> {
  const status = await dbStatus(file)
  const out: CheckResult[] = []
  out.push(
    result(
      'Schema version',
      'failure',
      status.state === 'upgrade-needed'
        ? [`migrations pending: ${status.pending.join(', ')}`]
        : status.state === 'newer'
          ? [`written by a newer placemat (${status.unknown.join(', ')})`]
          : status.state === 'empty'
            ? ['no placemat schema in this file']
            : [],
      status.state !== 'upgrade-needed'
        ? undefined
        : status.pending_expand.length
          ? `Run "placemat db upgrade --db ${file}" (with no daemon serving it), or "placemat db upgrade --expand --db ${file}" while the nodes serve.`
          : `Run "placemat db upgrade --contract --db ${file}" once every node runs placemat ${status.release}.`,
    ),
  )
  if (!isDatabaseUrl(file)) out.push(result('SQLite integrity', 'failure', status.integrity_ok ? [] : status.integrity))
  if (status.state === 'empty') return out

  const db = await inspect(file)
  try {
    const rows = <T>(q: RawBuilder<T> | string) => db.rows<T>(q)
    type P = {uuid: string; name: string; parent_uuid: string | null; root_uuid: string | null}
    const providers = new Map((await rows<P>('select uuid, name, parent_uuid, root_uuid from resource_providers')).map((p) => [p.uuid, p]))

    // Placement's "Missing Root Provider IDs", and roots that are not what the parents say.
    const rootProblems: string[] = []
    const treeProblems: string[] = []
    const trueRoot = (p: P): string | null => {
      const seen = new Set<string>()
      let cur: P | undefined = p
      while (cur?.parent_uuid) {
        if (seen.has(cur.uuid)) return null
        seen.add(cur.uuid)
        cur = providers.get(cur.parent_uuid)
      }
      return cur ? cur.uuid : null
    }
    for (const p of providers.values()) {
      if (p.parent_uuid && !providers.has(p.parent_uuid))
        treeProblems.push(`provider ${p.uuid} (${p.name}): parent ${p.parent_uuid} does not exist`)
      const root = trueRoot(p)
      if (root === null && p.parent_uuid && providers.has(p.parent_uuid))
        treeProblems.push(`provider ${p.uuid} (${p.name}) is in a parent loop`)
      if (!p.root_uuid) rootProblems.push(`provider ${p.uuid} (${p.name}) has no root provider id`)
      else if (!providers.has(p.root_uuid)) rootProblems.push(`provider ${p.uuid} (${p.name}): root ${p.root_uuid} does not exist`)
      else if (root !== null && root !== p.root_uuid)
        rootProblems.push(`provider ${p.uuid} (${p.name}): root is ${p.root_uuid}, its parents say ${root}`)
    }
    out.push(result('Missing Root Provider IDs', 'failure', rootProblems))
    out.push(result('Provider trees', 'failure', treeProblems))

    // Placement's "Incomplete Consumers": allocations whose consumer record is missing.
    const missing = await rows<{consumer_uuid: string}>(
      'select distinct a.consumer_uuid from allocations a left join consumers c on c.uuid = a.consumer_uuid where c.uuid is null',
    )
    out.push(
      result(
        'Incomplete Consumers',
        'warning',
        missing.map((r) => `allocations of consumer ${r.consumer_uuid} have no consumer record (placemat does not load them)`),
      ),
    )
    const incomplete = await rows<{uuid: string}>(
      sql`select uuid from consumers where project_id in (${INCOMPLETE_CONSUMER_ID}, '') or user_id in (${INCOMPLETE_CONSUMER_ID}, '')`,
    )
    out.push(
      result(
        'Consumers missing project/user',
        'warning',
        incomplete.map(
          (r) => `consumer ${r.uuid} has the incomplete-consumer project/user ${INCOMPLETE_CONSUMER_ID} (written before microversion 1.8)`,
        ),
        'Rewrite their allocations with project_id and user_id (placemat allocation set) to complete them.',
      ),
    )

    // Rows pointing at nothing.
    const dangling: string[] = []
    const classes = new Set((await rows<{name: string}>('select name from resource_classes')).map((r) => r.name))
    const traits = new Set((await rows<{name: string}>('select name from traits')).map((r) => r.name))
    for (const t of ['inventories', 'provider_traits', 'provider_aggregates', 'allocations']) {
      for (const r of await rows<{provider_uuid: string; n: number}>(
        `select provider_uuid, count(*) as n from ${t} group by provider_uuid`,
      )) {
        if (!providers.has(r.provider_uuid)) dangling.push(`${r.n} ${t} row(s) for provider ${r.provider_uuid}, which does not exist`)
      }
    }
    for (const r of await rows<{provider_uuid: string; trait: string}>('select provider_uuid, trait from provider_traits')) {
      if (!traits.has(r.trait)) dangling.push(`provider ${r.provider_uuid} has trait ${r.trait}, which does not exist`)
    }
    for (const t of ['inventories', 'allocations']) {
      for (const r of await rows<{resource_class: string; n: number}>(
        `select resource_class, count(*) as n from ${t} group by resource_class`,
      )) {
        if (!classes.has(r.resource_class)) dangling.push(`${r.n} ${t} row(s) of resource class ${r.resource_class}, which does not exist`)
      }
    }
    out.push(result('Rows referring to nothing', 'failure', dangling))

    // Inventories and allocations Placement could never have written.
    const inventories = await rows<Database['inventories']>('select * from inventories')
    const invalid: string[] = []
    for (const i of inventories) {
      const bad: string[] = []
      if (i.total < 0) bad.push('total < 0')
      if (i.reserved < 0) bad.push('reserved < 0')
      if (i.min_unit < 1) bad.push('min_unit < 1')
      if (i.max_unit < 1) bad.push('max_unit < 1')
      if (i.step_size < 1) bad.push('step_size < 1')
      if (i.min_unit > i.max_unit) bad.push('min_unit > max_unit')
      if (!(i.allocation_ratio > 0)) bad.push('allocation_ratio <= 0')
      if (bad.length) invalid.push(`${i.resource_class} on ${i.provider_uuid}: ${bad.join(', ')}`)
    }
    for (const r of await rows<Database['allocations']>('select * from allocations where used < 1')) {
      invalid.push(`consumer ${r.consumer_uuid} holds ${r.used} ${r.resource_class} on ${r.provider_uuid}`)
    }
    out.push(result('Inventory and allocation values', 'failure', invalid))

    const invByKey = new Map(inventories.map((i) => [`${i.provider_uuid}\u0000${i.resource_class}`, i]))
    const noInventory: string[] = []
    const over: string[] = []
    for (const u of await rows<{provider_uuid: string; resource_class: string; used: number}>(
      'select provider_uuid, resource_class, sum(used) as used from allocations group by provider_uuid, resource_class',
    )) {
      if (!providers.has(u.provider_uuid)) continue
      const inv = invByKey.get(`${u.provider_uuid}\u0000${u.resource_class}`)
      const name = providers.get(u.provider_uuid)!.name
      if (!inv) {
        noInventory.push(
          `${u.used} ${u.resource_class} allocated on ${name} (${u.provider_uuid}), which has no ${u.resource_class} inventory`,
        )
        continue
      }
      const cap = capacityOf(inv)
      if (u.used > cap) over.push(`${u.resource_class} on ${name} (${u.provider_uuid}): ${u.used} allocated, capacity ${cap}`)
    }
    out.push(result('Allocations without inventory', 'failure', noInventory))
    out.push(
      result(
        'Allocations over capacity',
        'warning',
        over,
        'Placement allows this after an inventory was reduced; new allocations there will fail until usage drops.',
      ),
    )
  } finally {
    await db.close()
  }
  return out
}

export function checkExitCode(results: CheckResult[]): number {
  if (results.some((r) => r.result === 'failure')) return DbExit.FAILURES
  if (results.some((r) => r.result === 'warning')) return DbExit.WARNINGS
  return 0
}
