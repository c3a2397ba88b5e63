import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {groupsOf} from '../../src/cli/groups/groups.js'
import {groupFileFlags} from '../../src/cli/groups/flags.js'

export default class GroupList extends PlacematCommand {
  static summary = 'List placement groups, each with its rule and whether it holds.'
  static description = `A placement group is a named set of consumers with a rule on where they may
be (see \`placemat group create\`). "holds" is "yes" when no member breaks the
rule where it is now, else the breaches are counted ("soft" groups only
order candidates, and are listed the same). Placement groups are kept by
placemat (a daemon or --db); on plain OpenStack Placement, in a local
file (--groups FILE, with --layout FILE for racks, rows and rooms). JSON/YAML: {groups: [...]}, each with its
members and violations.`

  static examples = ['<%= config.bin %> group list', '<%= config.bin %> group list --json']

  static flags = {...groupFileFlags}

  async run(): Promise<void> {
    const {flags} = await this.parse(GroupList)
    const groups = await (await groupsOf(await this.backend(), flags)).list()
    const rows = groups.map((g) => ({
      name: g.name,
      rule: g.rule,
      members: g.members.length,
      holds: g.violations.length ? `no (${g.violations.length} breach${g.violations.length === 1 ? '' : 'es'})` : 'yes',
      generation: g.generation,
    }))
    this.output({groups}, rows, [
      {key: 'name'},
      {key: 'rule'},
      {key: 'members', align: 'right'},
      {key: 'holds'},
      {key: 'generation', align: 'right'},
    ])
  }
}
