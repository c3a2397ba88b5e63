import {Args, Flags} from '@oclif/core'
import {importSnapshot} from '../src/cli/services/snapshot-import.js'
import {BaseCommand} from '../src/cli/command.js'

export default class Import extends BaseCommand {
  static summary = 'Load a snapshot (from `placemat export`) into a new or empty database file.'

  static description = `Writes straight into the database, in one transaction, so every provider and consumer keeps its
generation exactly (going through the API would move them). The file must be new or empty: no
providers, no consumers, no custom classes or traits. Classes and traits the snapshot uses but
this placemat does not know (a newer os-traits on the exporting side) are created.

A JSON snapshot (\`placemat export --json\`; a file named *.json or starting with '{') is
read and written piece by piece: memory holds the uuids and names seen (for the checks
across the file), never the snapshot, and a cloud of a million providers imports in about a
minute. YAML is parsed whole: big snapshots should be JSON.

Exit codes: 0 imported; 2 the snapshot is not readable or not consistent (nothing written);
4 the file is not empty (nothing written); 1 any other error.`

  static examples = ['<%= config.bin %> export --url http://placement:8778 > snap.yaml && <%= config.bin %> import snap.yaml --db copy.db']

  static args = {
    file: Args.string({required: true, description: 'snapshot file, YAML or JSON ("-" for stdin)'}),
  }

  static flags = {
    db: Flags.string({description: 'the SQLite file to create (or an empty one), or a postgres:// URL of an empty database', required: true}),
    json: Flags.boolean({description: 'print what was imported as JSON'}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Import)
    const result = await importSnapshot(args.file, flags.db)
    if (flags.json) this.log(JSON.stringify(result, null, 2))
    else {
      this.log(
        `imported into ${flags.db}: ${result.providers} providers, ${result.consumers} consumers, ` +
          `${result.allocations} allocations, ${result.resource_classes} custom classes, ${result.traits} custom traits`,
      )
    }
  }

}
