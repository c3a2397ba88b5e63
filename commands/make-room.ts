import {Flags} from '@oclif/core'
import {readFlavorFile} from '../src/cli/capacity/flavor-file.js'
import {usageError} from '../src/cli/failure.js'
import {groupFileFlags} from '../src/cli/groups/flags.js'
import {MOVE_COLUMNS, PlanCommand} from '../src/cli/plan-command.js'
import {chosenFlavors} from '../src/cli/services/capacity.js'
import {makeRoom} from '../src/cli/services/make-room.js'
import {lostDomainOf} from '../src/core/headroom/what-if-headroom.js'
import type {FlavorRequest} from '../src/core/headroom/flavors.js'
import type {PlanGoal} from '../src/core/make-room/record.js'

export default class MakeRoom extends PlanCommand {
  static summary = 'The fewest consumer moves after which K more of a flavor fit, or N hosts are empty; --apply carries them out.'
  static description = `With --flavor and --count: the fewest moves after which COUNT more of the
flavor fit in the domain --in names (host:, rack:, row: or room:NAME; the
cloud without it), as placemat capacity counts them. With --free-hosts N: the
fewest moves that leave N hosts of the domain empty (those empty already
count), the emptiest emptied first.

A move is a live migration: what a consumer holds on its host's providers
goes to one other enabled host (moves may leave the domain), what it holds on
shared storage stays, no provider is overfilled at any step and every hard
placement-group rule holds after each move. The moves are listed in the
order they run; each is valid when it runs.

The answer says which method found the plan (heuristic, or the exact search
on small clouds) and how far it is from the fewest: proved, or the best lower
bound known ("at least 10 are needed"). The table per domain is the flavor's
fit before and after.

The default is a dry run. --apply makes each move in one write of the
consumer's whole allocations with its consumer generation, which the server
checks against the cloud at that moment; a move refused with 409 (someone
took the room) has the rest planned again from the cloud as it is then, up to
5 times, else the run stops and lists what was and was not moved. No consumer
is left half moved.

Exit 0 when the goal is (or would be) reached, 4 when it cannot be (why: the
class or rule that binds).`

  static examples = [
    '<%= config.bin %> make-room --flavors flavors.yaml --flavor m1.xlarge --count 20 --in rack:r7',
    '<%= config.bin %> make-room --flavors flavors.yaml --flavor m1.xlarge --count 20 --in rack:r7 --apply',
    '<%= config.bin %> make-room --free-hosts 4 --in row:row-2 -f value -c consumer -c from -c to',
    '<%= config.bin %> make-room --flavors flavors.yaml --flavor m1.large --count 50 --json',
  ]

  static printed = {columns: MOVE_COLUMNS}
  static flags = {
    flavors: Flags.string({description: 'flavor file (osc JSON or YAML; - for stdin)'}),
    flavor: Flags.string({description: 'the flavor to make room for (with --count)', dependsOn: ['flavors', 'count']}),
    count: Flags.integer({description: 'how many more of the flavor must fit', min: 0, dependsOn: ['flavor']}),
    'free-hosts': Flags.integer({description: 'how many hosts must be empty', min: 0, exclusive: ['flavor', 'count']}),
    in: Flags.string({description: 'the domain: host:NAME, rack:NAME, row:NAME or room:NAME (default: the cloud)'}),
    apply: Flags.boolean({description: 'carry the plan out, move by move (default: a dry run)'}),
    'max-moves': Flags.integer({description: 'no plan of more moves than this', min: 0}),
    ...groupFileFlags,
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(MakeRoom)
    const domain =
      flags.in === undefined
        ? null
        : (lostDomainOf(flags.in) ?? usage(`--in ${flags.in}: host:NAME, rack:NAME, row:NAME or room:NAME expected`))
    let goal: PlanGoal
    let flavor: FlavorRequest | undefined
    if (flags['free-hosts'] !== undefined) goal = {goal: 'free_hosts', count: flags['free-hosts'], in: domain}
    else if (flags.flavor !== undefined && flags.count !== undefined && flags.flavors !== undefined) {
      flavor = chosenFlavors(readFlavorFile(flags.flavors), [flags.flavor])[0]
      goal = {goal: 'flavor', flavor: flags.flavor, count: flags.count, in: domain}
    } else return usage('give --flavors FILE --flavor NAME --count K, or --free-hosts N')
    const backend = await this.backend()
    const report = await this.withProgress(Boolean(flags.apply), (onProgress) =>
      makeRoom(backend, goal, flavor, {
        apply: flags.apply,
        maxMoves: flags['max-moves'],
        groups: flags.groups,
        layout: flags.layout,
        onProgress,
      }),
    )
    this.printPlan(report)
  }
}

const usage = (message: string): never => {
  throw usageError(message)
}
