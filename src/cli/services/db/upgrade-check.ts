/**
 * `placemat upgrade check`: OpenStack's pre-upgrade gate (`placement-status upgrade check`, on
 * oslo.upgradecheck) for a placemat database, run with the new release's placemat before its
 * daemon is started. Each check is a pure function of what the database and this machine's
 * daemon records report (UpgradeFacts) and gives Success, Warning (the upgrade may go on; look)
 * or Failure (it must not); the worst is the exit code (0, 1, 2), as placement-status's.
 *
 * A release that needs something done before it may serve adds its check to CHECKS.
 */
import {sql, type RawBuilder} from 'kysely'
import {INCOMPLETE_CONSUMER_ID} from '../../../core/placement/allocations.js'
import {daemonHealth, isAlive, readRecord} from '../../../daemon/control.js'
import {MIN_RELEASE_KEY, RELEASE, compareReleases, parseMinRelease, type MinRelease} from '../../../store/release.js'
import {judgeSchema} from '../../../store/schema-contract.js'
import {describeTarget, foreignDatabase, isDatabaseUrl} from '../../../store/target.js'
import {executedMigrations, inspect, knownMigrations} from './inspect.js'
import {describeNode, liveNodesOf, olderNodes, type LiveNodes} from './live-nodes.js'

/** oslo.upgradecheck's codes. */
export const UpgradeCode = {SUCCESS: 0, WARNING: 1, FAILURE: 2} as const
export type UpgradeCodeValue = (typeof UpgradeCode)[keyof typeof UpgradeCode]

/** One check's result, as placement-status --json prints it. */
export interface UpgradeCheckResult {
  check: string
  result: UpgradeCodeValue
  details: string | null
}

/** The whole report, as placement-status --json prints it. */
export interface UpgradeReport {
  name: 'Upgrade Check Results'
  checks: UpgradeCheckResult[]
}

/** What the checks judge: what the database and this machine's daemon records say. */
export interface UpgradeFacts {
  /** The database, for messages (no password). */
  database: string
  sqlite: boolean
  /** The migrations the database has run, and those this placemat knows. */
  applied: string[]
  known: string[]
  /** This placemat's release, and the oldest release a contract allows to serve the database. */
  release: string
  minRelease: MinRelease | null
  /** The nodes serving the database (live-nodes.ts). */
  nodes: LiveNodes
  /** Providers with no root provider id, or one naming no provider. */
  providersWithoutRoot: number
  /** Consumers holding allocations with no consumer record. */
  consumersWithoutRecord: number
  /** Consumers holding the incomplete-consumer project or user (written before microversion 1.8). */
  incompleteConsumers: number
  incompleteIds: {project: string; user: string}
  /** A daemon this machine's record says serves the database, if alive: what its health answer said (its release among the nodes). */
  daemon: {pid: number; url: string; answering: boolean; healthy: boolean; schema?: string} | null
}

type Check = (f: UpgradeFacts) => {result: UpgradeCodeValue; details?: string}

const success = {result: UpgradeCode.SUCCESS}

/**
 * The schema against this release's (schema-contract.ts). Pending migrations are a warning, not a
 * failure: running them is the upgrade (`placemat db upgrade`, as `placement-manage db sync`),
 * and the gate is asked before; `--expand` while the nodes serve, `--contract` once every node
 * runs this release. A failure: a newer release's contract, which this release cannot serve.
 * A newer release's expands alone (a rollback before its contract) are served.
 */
const schemaMigrations: Check = (f) => {
  if (!f.applied.length)
    return {result: UpgradeCode.SUCCESS, details: 'An empty database: the daemon (or placemat db init) makes its schema at first start.'}
  const v = judgeSchema({applied: f.applied, minRelease: f.minRelease}, f.database, f.known, f.release)
  const newerRelease = f.minRelease && compareReleases(f.minRelease.release, f.release) > 0
  if (newerRelease)
    return {result: UpgradeCode.FAILURE, details: `${v.refusal}: upgrade placemat instead, or restore a backup this release wrote.`}
  const said: string[] = []
  const some = (names: string[]) =>
    `${names.length} migration(s) pending (${names.length > 2 ? `${names[0]} to ${names.at(-1)}` : names.join(', ')})`
  if (v.pending.baseline.length) {
    const pending = [...v.pending.baseline, ...v.pending.expand, ...v.pending.contract]
    said.push(
      `The schema is older than placemat 0.1.0's: ${some(pending)}. This release's daemon refuses it until they have run: run "placemat db upgrade --db ${f.database}"` +
        (f.sqlite
          ? ' (with no daemon serving the file; it makes a backup first).'
          : ' (with no daemon serving it; back it up with pg_dump first).'),
    )
  } else if (v.pending.expand.length) {
    said.push(
      `The schema is older than this release's: ${some(v.pending.expand)} of its expand. This release's daemon refuses it until they have run: ` +
        `run "placemat db upgrade --expand --db ${f.database}" (the nodes serving it keep serving${f.sqlite ? '; it makes a backup first' : '; back it up with pg_dump first'}).`,
    )
  }
  if (v.pending.contract.length && !v.pending.baseline.length) {
    said.push(
      `This release's contract is pending (${v.pending.contract.join(', ')}): run "placemat db upgrade --contract --db ${f.database}" once every node runs placemat ${f.release} (it refuses while an older one serves).`,
    )
  }
  if (v.unknown.length) {
    said.push(
      `A newer placemat expanded it (migrations ${v.unknown.join(', ')} are unknown to this release): this release serves it until that release's contract runs; upgrade placemat to that release.`,
    )
  }
  return said.length ? {result: UpgradeCode.WARNING, details: said.join(' ')} : success
}

/** Placement's own: every provider has its root. */
const missingRootProviderIds: Check = (f) =>
  f.providersWithoutRoot
    ? {
        result: UpgradeCode.FAILURE,
        details: `${f.providersWithoutRoot} resource provider(s) miss their root provider id, or name one that does not exist: see "placemat db check".`,
      }
    : success

/**
 * Placement's own (allocations whose consumer has no record), with what placemat keeps of an
 * incomplete consumer: one whose project or user is the placeholder of a write before 1.8.
 */
const incompleteConsumers: Check = (f) => {
  const said: string[] = []
  if (f.consumersWithoutRecord) {
    said.push(
      `There are ${f.consumersWithoutRecord} incomplete consumers table records for existing allocations (placemat does not serve them; see "placemat db check").`,
    )
  }
  if (f.incompleteConsumers) {
    said.push(
      `${f.incompleteConsumers} consumer(s) have the incomplete-consumer project or user (${f.incompleteIds.project === f.incompleteIds.user ? f.incompleteIds.project : `${f.incompleteIds.project}, ${f.incompleteIds.user}`}), ` +
        "written before microversion 1.8: nova-manage placement heal_allocations completes nova's, or write their allocations again with a project and user (placemat allocation set).",
    )
  }
  return said.length ? {result: UpgradeCode.WARNING, details: said.join(' ')} : success
}

/**
 * The nodes serving the database: those of another release (registered, or the traces of one
 * before registration, live-nodes.ts), and this machine's daemon when its health is not ok.
 * Older ones keep serving the expanded schema; the contract waits until none is left.
 */
const nodesServing: Check = (f) => {
  const said: string[] = []
  const d = f.daemon
  if (d && !d.healthy) {
    said.push(
      `A daemon (pid ${d.pid} at ${d.url}) is recorded as serving ${f.database} but its health ${d.answering ? 'is not ok' : 'does not answer'}: see its log.`,
    )
  }
  const older = olderNodes(f.nodes, f.release)
  if (older.length) {
    const expandPending = f.known.some((m) => !f.applied.includes(m)) && f.applied.length > 0
    said.push(
      `${older.length} node(s) of a release before placemat ${f.release} serve ${f.database}: ${older.join('; ')}. ` +
        (expandPending ? 'Upgrade the schema with "placemat db upgrade --expand" (they keep serving), then replace' : 'Replace') +
        ' them one at a time with this release behind the balancer; run "placemat db upgrade --contract" once none is left.',
    )
  }
  const newer = f.nodes.registered.filter((n) => compareReleases(n.release, f.release) > 0)
  if (newer.length)
    said.push(`${newer.length} node(s) of a newer release serve ${f.database}: ${newer.map((n) => describeNode(n)).join('; ')}.`)
  if (said.length) return {result: UpgradeCode.WARNING, details: said.join(' ')}
  const same = f.nodes.registered
  return same.length
    ? {
        result: UpgradeCode.SUCCESS,
        details: `${same.length} node(s) of placemat ${f.release} serve ${f.database}: ${same.map((n) => describeNode(n)).join('; ')}.`,
      }
    : success
}

/** The checks, in the order they are reported; a release adds its own here. */
const CHECKS: Array<[string, Check]> = [
  ['Schema Migrations', schemaMigrations],
  ['Missing Root Provider IDs', missingRootProviderIds],
  ['Incomplete Consumers', incompleteConsumers],
  ['Nodes Serving the Database', nodesServing],
]

export function runUpgradeChecks(facts: UpgradeFacts): UpgradeReport {
  return {
    name: 'Upgrade Check Results',
    checks: CHECKS.map(([check, fn]) => {
      const r = fn(facts)
      return {check, result: r.result, details: r.details ?? null}
    }),
  }
}

/** The worst result: placement-status's exit code. */
export function upgradeExitCode(report: UpgradeReport): UpgradeCodeValue {
  return report.checks.reduce<UpgradeCodeValue>((worst, c) => (c.result > worst ? c.result : worst), UpgradeCode.SUCCESS)
}

/**
 * What the checks judge, read from the database (read-only; a database that is not placemat's is
 * refused, as every command refuses it) and this machine's daemon record.
 */
export async function upgradeFacts(target: string, incomplete: {project?: string; user?: string} = {}): Promise<UpgradeFacts> {
  const ids = {project: incomplete.project ?? INCOMPLETE_CONSUMER_ID, user: incomplete.user ?? INCOMPLETE_CONSUMER_ID}
  const db = await inspect(target)
  let facts: Omit<UpgradeFacts, 'daemon'>
  try {
    const foreign = foreignDatabase(target, await db.tables())
    if (foreign) throw foreign
    const applied = await executedMigrations(db)
    const minRelease = applied.length
      ? parseMinRelease(
          (
            await db.rows<{value: string}>(sql`select ${sql.ref('value')} from placemat_meta where ${sql.ref('key')} = ${MIN_RELEASE_KEY}`)
          )[0]?.value,
        )
      : null
    const count = async (q: RawBuilder<{n: number | string}>) => (applied.length ? Number((await db.rows(q))[0].n) : 0)
    facts = {
      database: describeTarget(target),
      sqlite: !isDatabaseUrl(target),
      applied,
      known: knownMigrations(),
      release: RELEASE,
      minRelease,
      nodes: await liveNodesOf(db, target),
      providersWithoutRoot: await count(
        sql`select count(*) as n from resource_providers p where p.root_uuid is null or not exists (select 1 from resource_providers r where r.uuid = p.root_uuid)`,
      ),
      consumersWithoutRecord: await count(
        sql`select count(distinct a.consumer_uuid) as n from allocations a left join consumers c on c.uuid = a.consumer_uuid where c.uuid is null`,
      ),
      incompleteConsumers: await count(sql`select count(*) as n from consumers where project_id = ${ids.project} or user_id = ${ids.user}`),
      incompleteIds: ids,
    }
  } finally {
    await db.close()
  }
  const record = readRecord(target)
  const daemon = record && isAlive(record.pid) ? {pid: record.pid, url: record.url, ...(await daemonHealth(record.url))} : null
  return {...facts, daemon}
}

/** oslo.upgradecheck's details: wrapped at 60 characters, the lines after the first indented by two. */
function wrap(text: string, width = 60): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const indent = lines.length ? '  ' : ''
    if (line && (indent + line + ' ' + word).length > width) {
      lines.push(indent + line)
      line = word
    } else line = line ? `${line} ${word}` : word
  }
  if (line) lines.push((lines.length ? '  ' : '') + line)
  return lines
}

const RESULT_WORD: Record<UpgradeCodeValue, string> = {0: 'Success', 1: 'Warning', 2: 'Failure'}

/** The report as placement-status prints it: one column, a row per check, a rule between rows. */
export function upgradeTable(report: UpgradeReport): string {
  const cells = report.checks.map((c) => {
    const details = c.details === null ? ['None'] : wrap(c.details)
    return [`Check: ${c.check}`, `Result: ${RESULT_WORD[c.result]}`, `Details: ${details[0]}`, ...details.slice(1)]
  })
  const width = Math.max(report.name.length, ...cells.flat().map((l) => l.length))
  const rule = `+${'-'.repeat(width + 2)}+`
  const row = (l: string) => `| ${l.padEnd(width)} |`
  return [rule, row(report.name), rule, ...cells.flatMap((cell) => [...cell.map(row), rule])].join('\n')
}
