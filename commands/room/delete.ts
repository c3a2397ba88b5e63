import {Args} from '@oclif/core'
import {PLAIN_NOTE, TopologyEditCommand, editFlags} from '../../src/cli/topology-commands.js'
import {edits} from '../../src/core/layout-edits.js'

export default class RoomDelete extends TopologyEditCommand {
  static summary = 'Delete a room; its rows stay, standing alone.'
  static description = `The room's hosts leave its aggregate; the rows and racks are kept. Exit 3
if there is no such room.

${PLAIN_NOTE}`
  static examples = ['<%= config.bin %> room delete room-1']
  static args = {name: Args.string({required: true, description: 'room name'})}
  static flags = {...editFlags}

  async run(): Promise<void> {
    const {args, flags} = await this.parse(RoomDelete)
    await this.edit(flags, (doc) => edits.roomDelete(doc, args.name))
  }
}
