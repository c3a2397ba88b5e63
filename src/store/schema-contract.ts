/**
 * The schema's compatibility contract between releases (OpenStack's N/N+1 rule, with Keystone's
 * expand and contract): which databases this release serves, and which migrations `db upgrade
 * --expand` and `--contract` run.
 *
 * A release serves a database when every baseline migration and every expand it knows has run
 * (its code relies on them), whether or not its own contracts have (its code works before and
 * after them), and no contract recorded a release newer than it as the oldest that may serve
 * (placemat_meta min_release). Migrations it does not know, a newer release's expands, do not
 * stop it: that release promised that the one before keeps working on them.
 */
import {sql, type Kysely} from 'kysely'
import {MIN_RELEASE_KEY, RELEASE, compareReleases, parseMinRelease, type MinRelease} from './release.js'
import {BASELINE, PHASES, migrations} from './schema.js'

export type Phase = 'baseline' | 'expand' | 'contract'

/** A migration's phase: PHASES's, the baseline up to placemat 0.1.0's schema, an expand otherwise. */
export function phaseOf(name: string): Phase {
  return PHASES[name]?.phase ?? (name <= BASELINE ? 'baseline' : 'expand')
}

/** The migrations this release knows, in order. */
export const knownMigrations = (): string[] => Object.keys(migrations).sort()

/** What the database says of its schema. */
export interface SchemaFacts {
  /** The migrations it has run. */
  applied: string[]
  /** The oldest release a contract allows, if any ran. */
  minRelease: MinRelease | null
}

export interface SchemaVerdict {
  serves: boolean
  /** Why this release does not serve it (one line naming what to do), or null. */
  refusal: string | null
  /** The migrations this release knows that have not run, by phase, in order. */
  pending: Record<Phase, string[]>
  /** Migrations this release does not know: a newer release's. */
  unknown: string[]
  minRelease: MinRelease | null
}

/** Whether this release serves a database with `facts` (`target` names it in the refusal). */
export function judgeSchema(facts: SchemaFacts, target: string, known: string[] = knownMigrations(), release = RELEASE): SchemaVerdict {
  const applied = new Set(facts.applied)
  const pending: Record<Phase, string[]> = {baseline: [], expand: [], contract: []}
  for (const m of known) if (!applied.has(m)) pending[phaseOf(m)].push(m)
  const knownSet = new Set(known)
  const unknown = facts.applied.filter((m) => !knownSet.has(m))
  const min = facts.minRelease
  let refusal: string | null = null
  if (min && compareReleases(min.release, release) > 0) {
    refusal = `database ${target} was contracted by placemat ${min.release} (${min.migration}): it needs placemat ${min.release} or later; this is placemat ${release}`
  } else if (pending.baseline.length) {
    refusal =
      `database ${target} has schema migrations pending (${list(pending.baseline)}); ` +
      `run \`placemat db upgrade --db ${target}\` first, with no daemon serving it`
  } else if (pending.expand.length) {
    refusal =
      `database ${target} has schema migrations pending that placemat ${release} needs (${list(pending.expand)}); ` +
      `run \`placemat db upgrade --expand --db ${target}\` first (the nodes serving it may keep serving)`
  }
  return {serves: refusal === null, refusal, pending, unknown, minRelease: min}
}

const list = (names: string[]) => (names.length > 3 ? `${names[0]} to ${names.at(-1)}, ${names.length} in all` : names.join(', '))

/** The migrations that must run, in order, for `upTo` (a known migration) to have run: those pending up to it. */
export function pendingUpTo(facts: SchemaFacts, upTo: string, known: string[] = knownMigrations()): string[] {
  const applied = new Set(facts.applied)
  return known.filter((m) => m <= upTo && !applied.has(m))
}

/** The last expand this release knows (what `db upgrade --expand` migrates to). */
export function lastExpand(known: string[] = knownMigrations()): string | undefined {
  return known.filter((m) => phaseOf(m) !== 'contract').at(-1)
}

/** The release that brought a migration (after the baseline), for messages. */
export const releaseOf = (name: string): string | undefined => PHASES[name]?.release

/**
 * What the database says of its schema: the migrations it ran and the contract's record (none
 * for an empty database). Two plain reads, cheap enough for every heartbeat.
 */
export async function readSchemaFacts(db: Kysely<any>): Promise<SchemaFacts> {
  let applied: string[]
  try {
    applied = (await sql<{name: string}>`select name from kysely_migration order by name`.execute(db)).rows.map((r) => String(r.name))
  } catch (err) {
    if (/kysely_migration|no such table|does not exist/i.test(String((err as Error).message))) return {applied: [], minRelease: null}
    throw err
  }
  const meta = await sql<{value: string}>`select ${sql.ref('value')} from placemat_meta where ${sql.ref('key')} = ${MIN_RELEASE_KEY}`
    .execute(db)
    .catch(() => ({rows: []}))
  return {applied, minRelease: parseMinRelease(meta.rows[0]?.value)}
}

/** The database's schema is not one this release serves (see judgeSchema): the daemon does not start. */
export class SchemaOutOfDateError extends Error {
  constructor(
    readonly file: string,
    readonly verdict: SchemaVerdict,
  ) {
    super(verdict.refusal ?? `database ${file} is not served by placemat ${RELEASE}`)
    this.name = 'SchemaOutOfDateError'
  }

  /** The migrations pending that this release needs. */
  get pending(): string[] {
    return [...this.verdict.pending.baseline, ...this.verdict.pending.expand]
  }
}
