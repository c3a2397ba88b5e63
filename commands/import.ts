import {Args, Flags} from '@oclif/core'
import {importFromPlacement, importSnapshot} from '../src/cli/services/snapshot-import.js'
import {usageError} from '../src/cli/failure.js'
import {placementUrlOfConfig, PlacementUrlError} from '../src/store/placement-db/connection.js'
import {BaseCommand} from '../src/cli/base-command.js'

export default class Import extends BaseCommand {
  static summary = "Load a snapshot (from `placemat export`), or a running Placement's database, into a new or empty database."

  static description = `Writes straight into the database, in one transaction, so every provider and consumer keeps its
generation exactly (going through the API would move them). The file must be new or empty: no
providers, no consumers, no custom classes or traits. Classes and traits the snapshot uses but
this placemat does not know (a newer os-traits on the exporting side) are created.

A JSON snapshot (\`placemat export --json\`; a file named *.json or starting with '{') is
read and written piece by piece: memory holds the uuids and names seen (for the checks
across the file), never the snapshot, and a cloud of a million providers imports in about a
minute. YAML is parsed whole: big snapshots should be JSON.

--from-placement DATABASE_URL (or --config-file placement.conf, whose [placement_database]
connection it takes) reads OpenStack Placement's own database instead: MySQL/MariaDB
(mysql+pymysql://...), PostgreSQL (postgresql://..., postgresql+psycopg2://...) or SQLite
(sqlite:////absolute/path), the URL forms placement.conf uses. It reads in one read-only
transaction that sees one consistent state, page by page (bounded memory), and never writes to
Placement's database. Placement 8.0.0's schema and the newest release's are read; any other is
refused, naming the version found. Aggregate ids are stored in canonical form (lower case).

A snapshot of placemat (version 2) also brings its racks, rows and rooms, its placement
groups, what consumers moved away with claim move were, why hosts are disabled and the names
apply files gave aggregates. The hard groups' rules are checked where the snapshot's allocations put their members:
a snapshot that breaks one is refused, naming the group and the members, unless
--allow-violations (then placemat audit reports it). Snapshots of version 1 (without them)
are read as before.

Exit codes: 0 imported; 2 the snapshot is not readable or not consistent (nothing written);
4 the file is not empty, or the snapshot's allocations break a hard placement group's rule
(nothing written); 1 any other error.`

  static examples = [
    '<%= config.bin %> export --url http://placement:8778 > snap.yaml && <%= config.bin %> import snap.yaml --db copy.db',
    '<%= config.bin %> import --from-placement mysql+pymysql://placement:SECRET@db/placement --db placemat.db',
    '<%= config.bin %> import --config-file /etc/placement/placement.conf --db postgres://placemat@db/placemat',
  ]

  static args = {
    file: Args.string({description: 'snapshot file, YAML or JSON ("-" for stdin)'}),
  }

  static flags = {
    db: Flags.string({
      description: 'the SQLite file to create (or an empty one), or a postgres:// or mysql:// URL of an empty database',
      required: true,
    }),
    json: Flags.boolean({description: 'print what was imported as JSON'}),
    'from-placement': Flags.string({
      description: "OpenStack Placement's database URL (as placement.conf's [placement_database] connection)",
      exclusive: ['config-file'],
    }),
    'config-file': Flags.string({
      description: 'placement.conf: read the database its [placement_database] connection names',
      exclusive: ['from-placement'],
    }),
    'allow-violations': Flags.boolean({description: "import placement groups even when the snapshot's allocations break their rules"}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Import)
    const fromPlacement = this.placementUrl(flags)
    if ((fromPlacement === undefined) === (args.file === undefined)) {
      throw usageError('give a snapshot file, or --from-placement URL / --config-file placement.conf (one of them)')
    }
    const result = fromPlacement
      ? await importFromPlacement(fromPlacement, flags.db)
      : await importSnapshot(args.file!, flags.db, {allowViolations: flags['allow-violations']})
    if (flags.json) this.log(JSON.stringify(result, null, 2))
    else {
      this.log(
        `imported into ${flags.db}: ${result.providers} providers, ${result.consumers} consumers, ` +
          `${result.allocations} allocations, ${result.resource_classes} custom classes, ${result.traits} custom traits` +
          (result.topology_nodes ? `, ${result.topology_nodes} racks/rows/rooms` : '') +
          (result.groups ? `, ${result.groups} placement groups` : '') +
          (result.moved_consumers ? `, ${result.moved_consumers} moved consumers` : '') +
          (result.aggregate_names ? `, ${result.aggregate_names} aggregate names` : '') +
          (result.disabled_reasons ? `, ${result.disabled_reasons} disabled hosts' reasons` : '') +
          ('placement_schema' in result ? ` (Placement schema: ${result.placement_schema})` : ''),
      )
    }
  }

  private placementUrl(flags: {'from-placement'?: string; 'config-file'?: string}): string | undefined {
    if (flags['from-placement']) return flags['from-placement']
    if (!flags['config-file']) return undefined
    try {
      return placementUrlOfConfig(flags['config-file'])
    } catch (err) {
      if (err instanceof PlacementUrlError) throw usageError(err.message)
      throw err
    }
  }
}
