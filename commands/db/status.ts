import {Flags} from '@oclif/core'
import {DbExit, dbStatus} from '../../src/cli/services/db/status.js'
import {BaseCommand} from '../../src/cli/base-command.js'
import {localDbFlag} from '../../src/cli/local-db-flag.js'
import {describeNodes, summarizeNodes} from '../../src/cli/services/db/live-nodes.js'

export default class DbStatus extends BaseCommand {
  static summary = 'Show the schema version of a database file, pending migrations and the SQLite integrity check.'

  static description = `Reads the file directly (no daemon needed; a daemon may keep serving it). Lists the nodes
serving the database: those registered (placemat 0.2.0 and later, with their release) and the
traces of older ones (PostgreSQL: connections with no application_name running placemat's
statements; SQLite: a live daemon's pid record beside the file). On a SQLite file, the daemon its pid
record names too.

Exit codes: 0 schema current and integrity ok; 7 migrations pending (run \`placemat db upgrade\`);
9 the integrity check failed; 1 the file was written by a newer placemat, or another error;
3 no such file.`

  static examples = ['<%= config.bin %> db status', '<%= config.bin %> db status --db /var/lib/placemat/placemat.db --json']

  static flags = {
    db: localDbFlag("SQLite database file, postgres:// or mysql:// URL (env PLACEMAT_DB; default: the daemon's)"),
    json: Flags.boolean({description: 'print a JSON object'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(DbStatus)
    const s = await dbStatus(flags.db)
    if (flags.json) this.log(JSON.stringify(s, null, 2))
    else {
      const lines: [string, string][] = [
        ['file', s.file],
        ['schema', s.schema_version ?? '(none)'],
        ['latest known', s.latest],
        ['state', s.state],
        ['pending', s.pending.join(', ') || '-'],
        ...(s.unknown.length ? ([['unknown', s.unknown.join(', ')]] as [string, string][]) : []),
        ['integrity', s.integrity_ok ? 'ok' : s.integrity.join('; ')],
        ['journal mode', s.journal_mode],
        [
          'rows',
          Object.entries(s.counts)
            .map(([t, n]) => `${t} ${n}`)
            .join(', '),
        ],
        // A database URL is served by nodes (below), not by a daemon of this machine's.
        ...(s.daemon === undefined
          ? []
          : ([['daemon', s.daemon ? `pid ${s.daemon.pid} at ${s.daemon.url}` : 'not running']] as [string, string][])),
        ['release', `placemat ${s.release}: ${s.serves ? 'serves this database' : (s.refusal ?? 'no schema yet')}`],
        ['min release', s.min_release ? `${s.min_release.release} (${s.min_release.migration})` : '-'],
      ]
      for (const [k, v] of lines) this.log(`${k.padEnd(13)} ${v}`)
      const nodes = describeNodes(s.nodes)
      this.log(`${'nodes'.padEnd(13)} ${summarizeNodes(s.nodes)}`)
      for (const n of nodes) this.log(`  ${n}`)
      if (s.pending_expand.length)
        this.log(`\nRun \`placemat db upgrade --expand --db ${s.file}\` (nodes may keep serving) to apply ${s.pending_expand.join(', ')}.`)
      if (s.pending_contract.length)
        this.log(
          `${s.pending_expand.length ? '' : '\n'}Run \`placemat db upgrade --contract --db ${s.file}\` once every node runs placemat ${s.release}, to apply ${s.pending_contract.join(', ')}.`,
        )
    }
    if (!s.integrity_ok) this.exit(DbExit.FAILURES)
    if (s.state === 'newer') this.exit(1)
    if (s.state === 'upgrade-needed' || s.state === 'empty') this.exit(DbExit.UPGRADE_NEEDED)
  }
}
