import {Args, Flags} from '@oclif/core'
import {PLAIN_NOTE, TopologyEditCommand, editFlags} from '../../src/cli/topology-commands.js'
import {edits} from '../../src/core/layout-edits.js'

export default class RowCreate extends TopologyEditCommand {
  static summary = "Create a row of racks: every host of those racks joins the row's aggregate."
  static description = `The racks move into the new row (a rack is in one row: one in another row
leaves it), so all their hosts become members of the row's aggregate (and
of the room's, with --room). Exit 4 if the row exists, 3 if the room or a
rack does not.

${PLAIN_NOTE}`
  static examples = ['<%= config.bin %> row create row-1a --racks rack-1a-01,rack-1a-02 --room room-1']
  static args = {name: Args.string({required: true, description: 'row name'})}
  static flags = {
    racks: Flags.string({description: 'comma separated racks'}),
    room: Flags.string({description: 'the room the row is in (default: it stands alone)'}),
    ...editFlags,
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(RowCreate)
    const racks =
      flags.racks
        ?.split(',')
        .map((r) => r.trim())
        .filter(Boolean) ?? []
    await this.edit(flags, (doc) => edits.rowCreate(doc, args.name, {racks, room: flags.room}))
  }
}
