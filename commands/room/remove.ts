import {Args} from '@oclif/core'
import {PLAIN_NOTE, TopologyEditCommand, editFlags} from '../../src/cli/topology-commands.js'
import {edits} from '../../src/core/layout-edits.js'

export default class RoomRemove extends TopologyEditCommand {
  static summary = 'Take rows out of a room (they stand alone, racks and hosts and all).'
  static description = `The rows' hosts leave the room's aggregate. Exit 3 (and nothing changed)
if a row is not in the room.

${PLAIN_NOTE}`
  static examples = ['<%= config.bin %> room remove room-1 row-1c']
  static strict = false
  static args = {
    name: Args.string({required: true, description: 'room name'}),
    row: Args.string({required: true, description: 'row name; several may be given'}),
  }
  static flags = {...editFlags}

  async run(): Promise<void> {
    const {argv, flags} = await this.parse(RoomRemove)
    const [name, ...rows] = argv as string[]
    await this.edit(flags, (doc) => edits.roomRemove(doc, name, rows))
  }
}
