import {Flags} from '@oclif/core'
import {dbUpgrade} from '../../src/cli/services/db/upgrade.js'
import {BaseCommand} from '../../src/cli/base-command.js'
import {daemonDatabase, daemonDbFlags, localDbFlag} from '../../src/cli/local-db-flag.js'

export default class DbUpgrade extends BaseCommand {
  static summary =
    'Apply pending schema migrations to a database, in one transaction: all at once, or expand and contract around a rolling upgrade.'

  static description = `Each migration is an expand (additive: nodes of the release before keep serving) or a
contract (what only this release and later can live with). Runs in ONE transaction: a failing
migration leaves the database exactly as it was. Nothing to do is not an error.

  (plain)     every pending migration, on a database no daemon serves (a SQLite file is copied
              first, FILE.backup-<old schema>-<time>, unless --no-backup)
  --expand    this release's expands only, while the nodes serving the database (of the release
              before and of this one) keep serving; on SQLite it waits for the write lock
  --contract  everything pending, this release's contract included, once every node runs this
              release: refused while a node of an older release serves the database, naming it

A rolling upgrade: --expand, replace the nodes one at a time, --contract (see docs/upgrades.md).

The database is the one daemon start would serve: --db, PLACEMAT_DB, --db-url-file or
PLACEMAT_DB_FILE, placement.conf's [placement_database] connection (--config-file), the data
directory's.

Exit codes: 0 upgraded or already current; 1 a migration failed (nothing changed) or the database
is newer than this placemat; 3 no such file; 4 a daemon serves the file (plain), or a node of an
older release serves the database (--contract).`

  static examples = [
    '<%= config.bin %> db upgrade --db /var/lib/placemat/placemat.db',
    '<%= config.bin %> db upgrade --expand --db postgresql://placemat@db/placemat',
    '<%= config.bin %> db upgrade --contract --db postgresql://placemat@db/placemat',
  ]

  static flags = {
    // From the environment or a file too, so that a PostgreSQL URL's password stays off the command line.
    db: localDbFlag(
      "SQLite database file, or a postgres:// or mysql:// URL (migrated in one transaction on PostgreSQL, statement by statement on MariaDB, no backup) (env PLACEMAT_DB; default: the daemon's)",
    ),
    ...daemonDbFlags,
    expand: Flags.boolean({
      description: "run this release's expand migrations only (the nodes serving the database keep serving)",
      exclusive: ['contract'],
    }),
    contract: Flags.boolean({
      description: 'run every pending migration, contract included, once no node of an older release serves the database',
      exclusive: ['expand'],
    }),
    backup: Flags.boolean({description: 'copy the SQLite file before upgrading (--no-backup to skip)', default: true, allowNo: true}),
    json: Flags.boolean({description: 'print a JSON object'}),
  }

  async run(): Promise<void> {
    const {flags, metadata} = await this.parse(DbUpgrade)
    const r = await dbUpgrade(daemonDatabase(flags, !metadata.flags.db?.setFromDefault), {
      backup: flags.backup,
      phase: flags.expand ? 'expand' : flags.contract ? 'contract' : 'all',
    })
    if (flags.json) this.log(JSON.stringify(r, null, 2))
    else {
      if (!r.applied.length)
        this.log(`${r.file} is already at schema ${r.to}${r.phase === 'expand' ? " for this release's expand" : ''}; nothing to do`)
      else this.log(`${r.file}: schema ${r.from ?? '(none)'} -> ${r.to} (${r.applied.join(', ')})`)
      if (r.backup) this.log(`backup: ${r.backup}`)
      if (r.phase === 'expand' && r.pending.length) {
        this.log(
          `still pending: ${r.pending.join(', ')}; run \`placemat db upgrade --contract --db ${r.file}\` once every node runs this release`,
        )
      }
    }
  }
}
