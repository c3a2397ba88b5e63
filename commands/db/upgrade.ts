import {Flags} from '@oclif/core'
import {dbUpgrade} from '../../src/cli/services/db.js'
import {BaseCommand} from '../../src/cli/command.js'

export default class DbUpgrade extends BaseCommand {
  static summary = 'Apply pending schema migrations to a database file, offline, in one transaction.'

  static description = `Copies the file first (FILE.backup-<old schema>-<time>, a consistent SQLite backup) unless
--no-backup, then runs every pending migration in ONE transaction: a failing migration leaves the
file exactly as it was. Refuses while a daemon serves the file (the daemon refuses to start on an
old schema and points here). Nothing to do is not an error.

Exit codes: 0 upgraded or already current; 1 a migration failed (nothing changed) or the file is
newer than this placemat; 3 no such file; 4 a daemon serves the file.`

  static examples = ['<%= config.bin %> db upgrade --db /var/lib/placemat/placemat.db', '<%= config.bin %> db upgrade --db copy.db --no-backup']

  static flags = {
    // From the environment too, so that a PostgreSQL URL's password stays off the command line.
    db: Flags.string({description: 'SQLite database file, or a postgres:// URL (migrated in one transaction, no backup)', required: true, env: 'PLACEMAT_DB'}),
    backup: Flags.boolean({description: 'copy the file before upgrading (--no-backup to skip)', default: true, allowNo: true}),
    json: Flags.boolean({description: 'print a JSON object'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(DbUpgrade)
    const r = await dbUpgrade(flags.db, {backup: flags.backup})
    if (flags.json) this.log(JSON.stringify(r, null, 2))
    else if (!r.applied.length) this.log(`${r.file} is already at schema ${r.to}; nothing to do`)
    else {
      this.log(`${r.file}: schema ${r.from ?? '(none)'} -> ${r.to} (${r.applied.join(', ')})`)
      if (r.backup) this.log(`backup: ${r.backup}`)
    }
  }

}
