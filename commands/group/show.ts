import {Args} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {SENTENCES} from '../../src/cli/output.js'
import {groupDrawing} from '../../src/cli/groups/draw.js'
import {groupsOf} from '../../src/cli/groups/groups.js'
import {groupFileFlags} from '../../src/cli/groups/flags.js'
import {breachText} from '../../src/core/groups.js'

export default class GroupShow extends PlacematCommand {
  static summary = 'Show a placement group: its rule, its members, and where they sit in the topology.'
  static description = `Draws the rooms, rows, racks and hosts that hold the group's members, with
each member on its host; the domains at the group's level say how many
members they hold, and those where the rule is broken are marked "!".
Members on a host in no domain of the group's level are under
"(none), outside the topology": a rule cannot be kept there, so for any
level but host that is a breach. JSON/YAML: the group as
GET /placemat/v1/groups/{name} answers it, with each member's hosts, racks,
rows and rooms.`

  static examples = ['<%= config.bin %> group show db-replicas', '<%= config.bin %> group show db-replicas --json']

  /** Sentences and a drawing: no columns to pick (--json or --yaml print the group's document). */
  static printed = SENTENCES
  static args = {name: Args.string({description: 'group name', required: true})}
  static flags = {...groupFileFlags}

  async run(): Promise<void> {
    const {args, flags} = await this.parse(GroupShow)
    const backend = await this.backend()
    const [g, layout] = await Promise.all([(await groupsOf(backend, flags)).show(args.name), backend.currentLayout(flags)])
    if (!this.textOutput) return this.outputRecord(g as unknown as Record<string, unknown>)
    const placed = (g.placements ?? []).filter((p) => p.hosts.length).length
    this.log(`Group ${g.name}: ${g.rule}; ${g.members.length} member(s), ${placed} placed; generation ${g.generation}`)
    this.log(g.violations.length ? `Broken: ${g.violations.map(breachText).join('; ')}` : 'The rule holds.')
    const lines = groupDrawing(g, layout ?? {})
    if (lines.length) this.log(lines.join('\n'))
  }
}
