import {Args} from '@oclif/core'
import {PLAIN_NOTE, TopologyEditCommand, editFlags} from '../../src/cli/topology-commands.js'
import {edits} from '../../src/core/layout-edits.js'

export default class RoomAdd extends TopologyEditCommand {
  static summary = 'Put rows in a room (a row in another room is moved).'
  static description = `The rows' hosts leave the old room's aggregate and join this one's; their
rack and row aggregates and other aggregates are kept.

${PLAIN_NOTE}`
  static examples = ['<%= config.bin %> room add room-2 row-1c']
  static strict = false
  static args = {
    name: Args.string({required: true, description: 'room name'}),
    row: Args.string({required: true, description: 'row name; several may be given'}),
  }
  static flags = {...editFlags}

  async run(): Promise<void> {
    const {argv, flags} = await this.parse(RoomAdd)
    const [name, ...rows] = argv as string[]
    await this.edit(flags, (doc) => edits.roomAdd(doc, name, rows))
  }
}
