import {Args, Flags} from '@oclif/core'
import {allowViolationsFlag, refusedForGroups} from '../src/cli/groups/flags.js'
import {PlacematCommand} from '../src/cli/placemat-command.js'
import {SENTENCES, serialize} from '../src/cli/output.js'
import {dryRunFailure, runReshape} from '../src/cli/services/reshape.js'
import {readPlan} from '../src/cli/formats/reshape-plan.js'
import {renderReport, type ReshapeReport} from '../src/cli/render/reshape-report.js'

export default class Reshape extends PlacematCommand {
  static summary = 'Move inventory, and the allocations against it, between providers in one POST /reshaper.'
  static printed = SENTENCES

  static description = `PLAN is a YAML or JSON file ("-" for stdin), in one of two forms.

1. A POST /reshaper body ({inventories, allocations}), sent as it is; any
   resource_provider_generation or consumer_generation left out is filled in from the current state.

2. The move form:

  moves:
    - from: cn1                  provider (name or uuid) the inventory leaves
      to: cn1_pgpu0              provider it goes to; when no provider has this name, it is
                                 created as a child of "parent" (default: from)
      uuid: UUID                 optional uuid for the created provider (default: the one its
                                 name gives, as apply gives: uuid5(NS, "provider:NAME"))
      parent: NAME|UUID          optional parent for the created provider
      resources: {VGPU: 4}       totals that move ("VGPU:4,..." works too; "all" = the whole total)
      inventory: {VGPU: {max_unit: 4}}
                                 optional fields of the new inventory on "to" (default: min_unit,
                                 step_size and allocation_ratio of the source, max_unit capped at
                                 the amount moved, reserved 0)
      consumers: [UUID, ...]     consumers whose allocations of these classes on "from" follow

  Per source and class, the totals moved leave the source (reserved is capped at what is left; the
  class disappears when all of it moves) and are added to the targets. A listed consumer moves its
  whole amount of each class it holds there; its other allocations stay. "consumers" may be left out
  only when one move takes all of a class: then every holder follows it. When all of a class leaves,
  every holder must be listed somewhere; when part of it leaves, unlisted holders stay.

The plan is turned into a reshaper body from the current state, then checked by running placemat's
reshaper on a copy of that state. --dry-run prints the trees before and after (inventories,
used/capacity), the allocations that move and the conflicts (capacity, constraints, generations,
inventory in use) and changes nothing; it exits as the real run would (0, 4 conflict, 6 bad request).

Offline (--db FILE) and on a placemat daemon the new providers and the reshape are ONE transaction
(POST /placemat/v1/batch): all or nothing, even if the process is killed; a daemon serving the same
file sees the result on its next request. Plain Placement cannot create a provider inside a
reshape: new providers are created first, then POST /reshaper; when the reshape fails the providers
this run created are deleted again (until then they exist empty, which nothing can select; a rerun
reuses them by name).
On 409 concurrent_update the plan is read and made again (up to 5 times) when the generations were
filled in by placemat.

Exit codes: 0 done (or would succeed); 2 the plan is unusable (nothing written); 3 a provider is
missing; 4 conflict (capacity, generation, inventory in use); 6 Placement refused the body; 5
unreachable.`

  static examples = [
    '<%= config.bin %> reshape fixtures/reshape/vgpu.yaml --db placement.db --dry-run',
    '<%= config.bin %> reshape fixtures/reshape/vgpu.yaml --url http://placement:8778 --token $OS_TOKEN',
    '<%= config.bin %> reshape body.json --json',
  ]

  static args = {
    plan: Args.string({required: true, description: 'plan file, YAML or JSON ("-" for stdin)'}),
  }

  static flags = {
    'dry-run': Flags.boolean({description: 'print the trees before and after and the conflicts; change nothing'}),
    ...allowViolationsFlag,
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Reshape)
    const plan = readPlan(args.plan)
    const print = (r: ReshapeReport) => this.log(this.textOutput ? renderReport(r) : serialize(r, this.format))
    const backend = await this.backend()
    const report = await refusedForGroups(() =>
      runReshape(backend, plan, {dryRun: Boolean(flags['dry-run']), allowViolations: flags['allow-violations']}, print),
    )
    print(report)
    // A dry run exits as the real run would.
    const failure = dryRunFailure(report)
    if (failure) throw failure
  }
}
