import {Flags} from '@oclif/core'
import {runUpgradeChecks, upgradeExitCode, upgradeFacts, upgradeTable, type UpgradeReport} from '../../src/cli/services/db/upgrade-check.js'
import {messageOf} from '../../src/cli/failure.js'
import {BaseCommand} from '../../src/cli/base-command.js'
import {daemonDbFlags, daemonSources, localDbFlag} from '../../src/cli/local-db-flag.js'

export default class UpgradeCheck extends BaseCommand {
  static summary = 'Check a database is ready for this placemat release (as placement-status upgrade check).'

  static description = `The gate a deployment runs with the new release installed, before its daemon starts. Checks,
each Success, Warning or Failure:
  Schema Migrations            the schema against this release's: its expand pending is a
                               warning (placemat db upgrade --expand), so is its contract (--contract
                               once every node runs it); a newer release's contract is a failure
  Missing Root Provider IDs    providers without their root (failure, as Placement's)
  Incomplete Consumers         allocations whose consumer has no record, and consumers of the
                               incomplete-consumer project/user (warning, as Placement's)
  Nodes Serving the Database   nodes of another release serving it (registered ones, and traces of
                               those before 0.2.0), or this machine's daemon unhealthy (warning)

Reads the database directly (SQLite, PostgreSQL or MariaDB), read-only; a daemon may keep serving it.
The database is the one daemon start would serve: --db, PLACEMAT_DB, --db-url-file or
PLACEMAT_DB_FILE, placement.conf's [placement_database] connection (--config-file, whose
[placement] incomplete_consumer_project_id/_user_id are used too), the data directory's.

Exit codes, as placement-status's: 0 every check succeeded; 1 a warning (the upgrade may go on);
2 a failure (it must not); 255 the checks could not run (no database, one that cannot be read).`

  static examples = [
    '<%= config.bin %> upgrade check',
    '<%= config.bin %> upgrade check --config-file /etc/placement/placement.conf --json',
  ]

  static flags = {
    db: localDbFlag("SQLite database file, postgres:// or mysql:// URL (env PLACEMAT_DB; default: the daemon's)"),
    ...daemonDbFlags,
    json: Flags.boolean({description: 'print the results as JSON, as placement-status upgrade check --json does'}),
  }

  async run(): Promise<void> {
    const {flags, metadata} = await this.parse(UpgradeCheck)
    let report: UpgradeReport
    try {
      const {target, config} = daemonSources(flags, !metadata.flags.db?.setFromDefault)
      report = runUpgradeChecks(await upgradeFacts(target, config?.incompleteConsumer))
    } catch (err) {
      // 255, as oslo.upgradecheck: not to be read as a check's result.
      process.stderr.write(`placemat: ${messageOf(err)}\n`)
      return this.exit(255)
    }
    this.log(flags.json ? JSON.stringify(report) : upgradeTable(report))
    const code = upgradeExitCode(report)
    if (code) this.exit(code)
  }
}
