/**
 * Opening a store's database: connecting (again with backoff while the database is away),
 * migrating the schema as told, and seeding the standard resource classes and traits.
 */
import {Migrator, sql, type CompiledQuery, type Kysely, type MigrationProvider} from 'kysely'
import {STANDARD_RESOURCE_CLASSES, STANDARD_TRAITS} from '../core/standard.js'
import {describeTarget, openBackend, type Backend, type BackendObserver, type BackendOptions} from './backends.js'
import {databaseFault, describeCause} from './database-faults.js'
import {headStatement, invalidateStatements, readHead} from './journal.js'
import {migrations, type Database} from './schema.js'
import {SchemaOutOfDateError, judgeSchema, readSchemaFacts, type SchemaVerdict} from './schema-contract.js'

export {SchemaOutOfDateError}

/** The database did not answer within --db-wait. */
export class DatabaseWaitError extends Error {
  constructor(
    readonly target: string,
    override readonly cause: unknown,
  ) {
    super(`database ${target} did not answer within the wait (${databaseFault(cause) ?? 'unavailable'}: ${describeCause(cause)})`)
    this.name = 'DatabaseWaitError'
  }
}

export interface OpenOptions extends BackendOptions {
  /** Create the schema on a new file, or run pending migrations (default: true for new files only). */
  migrate?: boolean
  /**
   * Checkpoint the WAL from a worker thread instead of inside the commits of write requests
   * (for the daemon: short writes, long-lived process).
   */
  backgroundCheckpoint?: boolean
  /**
   * Awaited inside each write transaction that changed something, after its rows and before its
   * journal and COMMIT (such writes then take the locked path, in two round trips): the seam the
   * fault tests kill a process at (daemon/node-flags.ts).
   */
  beforeCommit?: () => Promise<void>
  /**
   * SQLite: where the State's image is kept between a daemon's clean stop and the next start
   * (state-image-file.ts). Read at start when it fits the database; written at close only with
   * `saveStateImage` (the daemon: the one process that owns the file's image).
   */
  stateImage?: string
  saveStateImage?: boolean
}

/** How start tries again while the database is away. */
export interface OpenRetry {
  waitMs?: number
  signal?: AbortSignal
  onRetry?: (err: unknown, delayMs: number) => void
}

const staticMigrations: MigrationProvider = {getMigrations: async () => migrations}

/**
 * Runs `openOnce`; with `retry`, a database fault (unreachable, timed out, starting up) is tried
 * again with backoff until the database answers, `retry.waitMs` (if any) has passed, or
 * `retry.signal` aborts.
 */
export async function openWithRetry(target: string, retry: OpenRetry | undefined, openOnce: () => Promise<void>): Promise<void> {
  const deadline = retry?.waitMs !== undefined ? Date.now() + retry.waitMs : Infinity
  for (let delay = 250; ; delay = Math.min(delay * 2, 5000)) {
    try {
      await openOnce()
      return
    } catch (err) {
      const fault = databaseFault(err)
      if (!retry || !fault || retry.signal?.aborted) throw err
      const wait = Math.min(delay, deadline - Date.now())
      if (wait <= 0) throw new DatabaseWaitError(describeTarget(target), err)
      retry.onRetry?.(err, wait)
      await new Promise((r) => setTimeout(r, wait))
      if (retry.signal?.aborted) throw err
    }
  }
}

/**
 * Opens the database, migrating and seeding it as told, and has `load` load the State from it
 * (then, for a daemon, moves the checkpoints to a worker). The backend is closed again when any
 * of that fails.
 */
export async function openDatabase(
  file: string,
  options: OpenOptions,
  observer: BackendObserver,
  load: (backend: Backend, verdict: SchemaVerdict) => Promise<void>,
): Promise<Backend> {
  const backend = await openBackend(file, options)
  backend.observer = observer
  try {
    const target = describeTarget(file)
    let verdict = judgeSchema(await readSchemaFacts(backend.db), target)
    const pending = Object.values(verdict.pending).flat()
    // Told to migrate (a new database, db init, an import): everything at once, unless a newer
    // release has been here (then the verdict says whether this one serves it as it is).
    if (pending.length && (options.migrate ?? backend.isNew) && !verdict.unknown.length) {
      await migrate(backend.db)
      verdict = judgeSchema(await readSchemaFacts(backend.db), target)
    }
    if (!verdict.serves) throw new SchemaOutOfDateError(target, verdict)
    if (!options.readonly) await ensureStandard(backend)
    await load(backend, verdict)
    if (options.backgroundCheckpoint && !options.readonly) backend.serve()
    return backend
  } catch (err) {
    await backend.close().catch(() => undefined)
    throw err
  }
}

export async function pendingMigrations(db: Kysely<Database>): Promise<string[]> {
  const migrator = new Migrator({db, provider: staticMigrations})
  const all = await migrator.getMigrations()
  return all.filter((m) => !m.executedAt).map((m) => m.name)
}

export async function migrate(db: Kysely<Database>): Promise<string[]> {
  const migrator = new Migrator({db, provider: staticMigrations})
  const {error, results} = await migrator.migrateToLatest()
  if (error) throw error
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}

/**
 * Inserts any standard resource class or trait the database lacks (a newer placemat's); others
 * then load everything again, as after any write made outside the journal.
 */
async function ensureStandard(backend: Backend): Promise<void> {
  const db = backend.db
  await backend.session(async (s) => {
    const opening = backend.beginWrite()
    const [classRows, traitRows, headRows] = (
      await s.run([
        ...opening,
        db.selectFrom('resource_classes').select('name').compile(),
        db.selectFrom('traits').select(['name', 'id']).compile(),
        headStatement(db),
      ])
    ).slice(opening.length)
    const classes = new Set(classRows.map((r) => r.name))
    const traits = new Set(traitRows.map((r) => r.name))
    const missingClasses = STANDARD_RESOURCE_CLASSES.map((name, id) => ({id, name})).filter((c) => !classes.has(c.name))
    const missingTraits = STANDARD_TRAITS.filter((t) => !traits.has(t))
    if (!missingClasses.length && !missingTraits.length) {
      await s.run([sql`commit`.compile(db)])
      return
    }
    const now = Date.now()
    const writes: CompiledQuery[] = missingClasses.map((c) =>
      db
        .insertInto('resource_classes')
        .values({...c, created_at: now, updated_at: now})
        .compile(),
    )
    let id = traitRows.reduce((m, r) => Math.max(m, Number(r.id)), 0) + 1
    for (const name of missingTraits)
      writes.push(db.insertInto('traits').values({id: id++, name, created_at: now, updated_at: now}).compile())
    const head = readHead(headRows)
    await s.run([...writes, ...invalidateStatements(db, head.counter + 1), sql`commit`.compile(db)])
  })
}
