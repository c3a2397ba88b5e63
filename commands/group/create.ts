import {Args, Flags} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {SENTENCES} from '../../src/cli/output.js'
import {allowViolationsFlag, groupFileFlags, refusedForGroups} from '../../src/cli/groups/flags.js'
import {groupsOf} from '../../src/cli/groups/groups.js'
import {consumerUuid} from '../../src/cli/backend/consumer-lookup.js'
import {GROUP_LEVELS, GROUP_POLICIES} from '../../src/core/groups.js'
import {GROUP_NAME_RULE} from '../../src/core/group-writes.js'
import {checkGroupName} from '../../src/cli/groups/groups.js'

export default class GroupCreate extends PlacematCommand {
  static summary = 'Create a placement group: consumers with a rule on where they may be.'
  static printed = SENTENCES
  static description = `Policies, at --level host, rack, row or room:
- affinity: every placed member in one domain
- anti-affinity: no two members in one domain
- max-per: at most --max-per N members in one domain (Nova's max_server_per_host, at any level)
- spread: member counts across every domain of the level that has a host differ by at most --max-skew S (Kubernetes' maxSkew)

A hard group (the default) is checked by every write that could break it:
claims naming it (\`placemat claim --group NAME\`) or claiming one of its
members, topology changes (topology apply, rack/row/room add and remove),
and members added. A host in no rack, row or room at the group's level is
outside the topology: a hard rule cannot be kept there, so no member may be
placed on it (a soft group puts such hosts last; rules by host are not
concerned). Such writes are refused (exit 4, naming the group, its rule and
the members) unless --allow-violations. A --soft group refuses nothing: it
orders the candidates of a claim (those keeping the rule first; affinity:
the nearest to the members). \`placemat audit\` reports every group whose
rule is broken, and members outside the topology.
Writes through the plain Placement API are never refused (placemat answers
as Placement does); audit reports what they break.

--member adds consumers at once; if where they already are breaks the
rule, the group is not made (unless --allow-violations).`

  static examples = [
    '<%= config.bin %> group create db-replicas --policy anti-affinity --level row',
    '<%= config.bin %> group create web --policy max-per --max-per 2 --level rack',
    '<%= config.bin %> group create cache --policy spread --max-skew 1 --level room --soft',
  ]

  static args = {name: Args.string({description: `group name (${GROUP_NAME_RULE})`, required: true})}

  static flags = {
    policy: Flags.string({description: 'the rule', options: [...GROUP_POLICIES], required: true}),
    level: Flags.string({description: 'the domain the rule speaks of', options: [...GROUP_LEVELS], required: true}),
    'max-per': Flags.integer({description: 'max-per: members allowed in one domain', min: 1}),
    'max-skew': Flags.integer({description: 'spread: the largest difference between the fullest and the emptiest domain', min: 1}),
    soft: Flags.boolean({description: 'order candidates instead of refusing writes'}),
    member: Flags.string({description: 'a consumer uuid to add (repeatable, or comma separated)', multiple: true}),
    ...allowViolationsFlag,
    ...groupFileFlags,
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(GroupCreate)
    checkGroupName(args.name)
    const members = (flags.member ?? [])
      .flatMap((m) => m.split(','))
      .filter(Boolean)
      .map((m) => consumerUuid(m))
    const spec = {
      name: args.name,
      policy: flags.policy,
      level: flags.level,
      ...(flags['max-per'] !== undefined ? {max_per: flags['max-per']} : {}),
      ...(flags['max-skew'] !== undefined ? {max_skew: flags['max-skew']} : {}),
      ...(flags.soft ? {soft: true} : {}),
      ...(members.length ? {members} : {}),
    }
    const groups = await groupsOf(await this.backend(), flags)
    const g = await refusedForGroups(() => groups.create(spec, {allowViolations: flags['allow-violations']}))
    if (!this.textOutput) return this.outputRecord(g as unknown as Record<string, unknown>)
    this.log(`Created group ${g.name}: ${g.rule}, ${g.members.length} member(s).`)
  }
}
