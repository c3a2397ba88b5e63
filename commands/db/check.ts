import {Flags} from '@oclif/core'
import {checkExitCode, dbCheck} from '../../src/cli/services/db/check.js'
import {BaseCommand} from '../../src/cli/base-command.js'
import {localDbFlag} from '../../src/cli/local-db-flag.js'

export default class DbCheck extends BaseCommand {
  static summary = 'Run upgrade checks on a database file (as placement-status upgrade check does).'

  static description = `Checks, each success / warning / failure:
  Schema version                   migrations pending or unknown (failure)
  SQLite integrity                 PRAGMA integrity_check (failure)
  Missing Root Provider IDs        providers without a root, or whose root disagrees with their parents (failure)
  Provider trees                   parents that do not exist, parent loops (failure)
  Incomplete Consumers             allocations without a consumer record (warning, as Placement)
  Consumers missing project/user   consumers with the incomplete-consumer project/user (warning)
  Rows referring to nothing        inventories, traits, aggregates or allocations of missing providers,
                                   unknown resource classes or traits (failure)
  Inventory and allocation values  values Placement could not have written (failure)
  Allocations without inventory    allocations of a class the provider has no inventory of (failure)
  Allocations over capacity        usage above (total - reserved) * allocation_ratio (warning)

Reads the file directly; a daemon may keep serving it.

Exit codes: 0 every check succeeded; 8 warnings only; 9 at least one failure; 3 no such file;
1 another error.`

  static examples = ['<%= config.bin %> db check', '<%= config.bin %> db check --db placement.db --json']

  static flags = {
    db: localDbFlag("SQLite database file, postgres:// or mysql:// URL (env PLACEMAT_DB; default: the daemon's)"),
    json: Flags.boolean({description: 'print the results as JSON'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(DbCheck)
    const results = await dbCheck(flags.db)
    if (flags.json) this.log(JSON.stringify({file: flags.db, checks: results}, null, 2))
    else {
      const width = Math.max(...results.map((r) => r.name.length))
      for (const r of results) {
        this.log(`${r.name.padEnd(width)}  ${r.result.toUpperCase()}`)
        for (const d of r.details) this.log(`${' '.repeat(width + 2)}${d}`)
      }
    }
    const code = checkExitCode(results)
    if (code) this.exit(code)
  }
}
