import {PlacematCommand} from '../../src/cli/base.js'
import {groupsOf} from '../../src/cli/groups/groups.js'

export default class GroupList extends PlacematCommand {
  static summary = 'List placement groups, each with its rule and whether it holds.'
  static description = `A placement group is a named set of consumers with a rule on where they may
be (see \`placemat group create\`). "holds" is "yes" when no member breaks the
rule where it is now, else the breaches are counted ("soft" groups only
order candidates, and are listed the same). Placement groups are kept by
placemat (a daemon or --db). JSON/YAML: {groups: [...]}, each with its
members and violations.`

  static examples = ['<%= config.bin %> group list', '<%= config.bin %> group list --json']

  async run(): Promise<void> {
    await this.parse(GroupList)
    const groups = await groupsOf(await this.backend()).list()
    const rows = groups.map((g) => ({
      name: g.name,
      rule: g.rule,
      members: g.members.length,
      holds: g.violations.length ? `no (${g.violations.length} breach${g.violations.length === 1 ? '' : 'es'})` : 'yes',
      generation: g.generation,
    }))
    this.output({groups}, rows, [{key: 'name'}, {key: 'rule'}, {key: 'members', align: 'right'}, {key: 'holds'}, {key: 'generation', align: 'right'}])
  }
}
