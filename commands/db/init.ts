import {Flags} from '@oclif/core'
import {conflictError} from '../../src/cli/failure.js'
import {BaseCommand} from '../../src/cli/base-command.js'

export default class DbInit extends BaseCommand {
  static summary = 'Create a new placemat database file (or initialise an empty PostgreSQL or MariaDB database) for offline work.'
  static description = `Creates the file with the current schema and the standard resource classes and traits, so
that every command can work on it with --db before any daemon has served it (a daemon started on
a missing file creates it the same way). A file that already exists, or a database that holds
placemat's schema already, is left alone (exit 4: a bootstrap may run it at every deploy). A
URL's password is never printed.
Exit codes: 0 created; 4 it exists; 1 any other error.`
  static examples = ['<%= config.bin %> db init --db work/cloud.db && <%= config.bin %> apply cloud.yaml --db work/cloud.db']
  static flags = {
    db: Flags.string({description: 'the SQLite file to create, or a postgres:// or mysql:// URL of an empty database', required: true}),
    json: Flags.boolean({description: 'print a JSON object'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(DbInit)
    const [{default: fs}, {isDatabaseUrl, describeTarget}, {Store}, {holdsPlacemat}] = await Promise.all([
      import('node:fs'),
      import('../../src/store/target.js'),
      import('../../src/store/store.js'),
      import('../../src/cli/services/db/status.js'),
    ])
    // What was given, its password masked: a bootstrap that runs at every deploy logs this.
    const shown = describeTarget(flags.db)
    const exists = isDatabaseUrl(flags.db) ? await holdsPlacemat(flags.db) : fs.existsSync(flags.db)
    if (exists) throw conflictError(`${shown} exists already; nothing was changed`)
    const store = await Store.open(flags.db)
    await store.close()
    if (flags.json) this.log(JSON.stringify({created: shown}, null, 2))
    else this.log(`created ${shown}: an empty placemat database (use it with --db ${isDatabaseUrl(flags.db) ? 'URL' : flags.db})`)
  }
}
