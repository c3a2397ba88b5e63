import {Flags} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {DOCUMENT} from '../../src/cli/output.js'
import {usageError} from '../../src/cli/failure.js'
import {NEEDS_LAYOUT} from '../../src/cli/topology/edit.js'
import {layoutYaml} from '../../src/cli/topology/layout-file.js'

export default class TopologyLayout extends PlacematCommand {
  static summary = 'Print the current layout (YAML), to edit and re-apply with `topology apply`.'

  static description = `Prints rooms > rows > racks > hosts (hosts by name) in the form
\`placemat topology apply\` reads, with the topology generation it was read
at: applying the edited file then fails (exit 4) instead of undoing a change
someone made in between; delete the "generation:" line to apply it anyway.
Apply it with --prune for what was taken out of the file to be deleted.
--json prints GET /placemat/v1/topology/layout as it is.

On a plain OpenStack Placement endpoint, pass the layout file (--layout
FILE): its racks, rows and rooms are printed with the hosts each rack's
aggregate has now.`

  static examples = [
    '<%= config.bin %> topology layout > layout.yaml',
    '<%= config.bin %> topology layout --json',
    '<%= config.bin %> topology layout --layout layout.yaml --url http://placement:8778',
  ]

  static printed = DOCUMENT

  static flags = {
    layout: Flags.string({description: 'plain OpenStack Placement only: the layout file that names the racks, rows and rooms'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(TopologyLayout)
    const backend = await this.backend()
    const doc = await backend.currentLayout({layout: flags.layout})
    if (!doc) throw usageError(NEEDS_LAYOUT)
    if (this.format === 'json') {
      this.log(JSON.stringify(doc, null, 2))
      return
    }
    const header = ['placemat topology layout: edit, then `placemat topology apply FILE --prune` (--prune: what you take out goes)']
    if ('generation' in doc)
      header.push('generation: applies only while the topology is still at this generation (delete the line to apply anyway)')
    process.stdout.write(layoutYaml(doc, header))
  }
}
