import {Args, Flags} from '@oclif/core'
import {PLAIN_NOTE, TopologyEditCommand, editFlags} from '../../src/cli/topology-commands.js'
import {edits} from '../../src/core/layout-edits.js'

export default class RoomCreate extends TopologyEditCommand {
  static summary = "Create a room of rows: every host of those rows joins the room's aggregate."
  static description = `The rows move into the new room (a row is in one room: one in another
room leaves it). Exit 4 if the room exists, 3 if a row does not.

${PLAIN_NOTE}`
  static examples = ['<%= config.bin %> room create room-1 --rows row-1a,row-1b']
  static args = {name: Args.string({required: true, description: 'room name'})}
  static flags = {
    rows: Flags.string({description: 'comma separated rows'}),
    ...editFlags,
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(RoomCreate)
    const rows =
      flags.rows
        ?.split(',')
        .map((r) => r.trim())
        .filter(Boolean) ?? []
    await this.edit(flags, (doc) => edits.roomCreate(doc, args.name, {rows}))
  }
}
