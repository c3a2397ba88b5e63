import {Args, Flags} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {SENTENCES} from '../../src/cli/output.js'
import type {ProgressHandle} from '../../src/cli/components/Progress.js'
import {allowViolationsFlag} from '../../src/cli/groups/flags.js'
import {applyLayoutFile} from '../../src/cli/services/topology-apply.js'
import {appliedLine, layoutAnswer, planLines, planSize, planSummary} from '../../src/cli/topology/plan-text.js'
import type {TopologyPlan} from '../../src/core/topology.js'

/** Plans with at least this many changes get a progress bar on a terminal. */
const LARGE = 500

export default class TopologyApply extends PlacematCommand {
  static summary = 'Put racks, rows, rooms and their hosts where a layout file says (idempotent; deletes only with --prune).'
  static printed = SENTENCES

  static description = `Reads LAYOUT (YAML or JSON; "-" for stdin): rooms > rows > racks > hosts,
where rows and racks may also stand alone (top-level "rows:" and "racks:"):

  rooms:
    - name: room-1
      rows:
        - name: row-1a
          racks:
            - name: rack-1a-01
              hosts: [cn-0001, cn-0002]

LAYOUT may also be a datacenter's one file, as \`placemat apply\` takes it
(providers and the layout): here its providers, resource_classes, traits
and aggregates are skipped, and any other key is refused.

Hosts are root providers, by name or uuid. Each rack, row and room is an
aggregate with a fixed uuid (uuid5 of "level:name" in placemat's namespace),
and a host in a rack is a member of its rack's, row's and room's aggregates,
so any Placement client can filter by them (member_of). The host's other
aggregates are kept. What the file does not name stays where it is: racks,
rows and rooms under their parents, hosts in their racks. With --prune the
topology becomes exactly the file: racks, rows and rooms not in it are
deleted and hosts not in it leave the topology. A file that names no rack,
row or room is refused without --prune (with it, it empties the topology).

Prints the plan (one line per change: "+" create/add, "~" re-parent/move,
"-" delete/remove) and applies it with the topology generation it was
planned at: if the topology changed in between (another apply or a rack/
row/room command), nothing is applied and the exit code is 4. A file with
a "generation:" key (as \`placemat topology layout\` prints it) applies only
if the topology is still at that generation. Applying the same file again
plans nothing. A bad layout (unknown host, a host in two racks, a rack or
row twice) changes nothing and exits 6. --dry-run exits as the apply would:
4 for a stale generation or a broken placement group, with the same message.

On a plain OpenStack Placement endpoint (no /placemat/v1) it is done
client-side: the same aggregate uuids, each host's aggregates set through
PUT /resource_providers/{uuid}/aggregates with its generation (retried on
409), other aggregates kept. Placement cannot store names, so keep the file:
\`topology show\` and \`topology layout\` then need it (--layout FILE), and to
delete a rack, row or room pass --prune and the layout applied before
(--previous FILE), else its hosts keep that aggregate.

A change that would break a placement group (members of an anti-affinity
group brought into one row, a spread unbalanced) is refused with exit 4,
naming the group, its rule and the members; the dry run lists such breaches
("! breaks group ..."). --allow-violations applies it anyway, and
\`placemat audit\` then reports the group.`

  static examples = [
    '<%= config.bin %> topology apply fixtures/topology/layout-small.yaml --dry-run',
    '<%= config.bin %> topology apply layout.yaml --db placement.db',
    '<%= config.bin %> topology layout > layout.yaml && $EDITOR layout.yaml && <%= config.bin %> topology apply layout.yaml --prune',
    '<%= config.bin %> topology apply new.yaml --prune --previous old.yaml --url http://placement:8778 --token $OS_TOKEN',
  ]

  static args = {
    layout: Args.string({required: true, description: 'layout file, YAML or JSON ("-" for stdin)'}),
  }

  static flags = {
    'dry-run': Flags.boolean({description: 'print the plan and change nothing (exits as the apply would)'}),
    prune: Flags.boolean({
      description: 'make the topology exactly the file: delete the racks, rows and rooms it does not name; hosts it does not name leave',
    }),
    generation: Flags.integer({description: 'apply only if the topology is still at this generation (exit 4 otherwise)', min: 0}),
    previous: Flags.string({
      description: 'plain Placement only, with --prune: the layout applied before (its racks/rows/rooms that are gone get emptied)',
    }),
    concurrency: Flags.integer({description: 'calls in flight on a plain Placement endpoint', default: 16, min: 1, max: 256}),
    ...allowViolationsFlag,
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(TopologyApply)
    const table = this.textOutput
    const tty = Boolean(process.stdout.isTTY) && table
    const Progress = tty ? await import('../../src/cli/components/Progress.js') : undefined
    let bar: ProgressHandle | undefined
    let planned: TopologyPlan | undefined
    const stopBar = () => {
      bar?.stop()
      bar = undefined
    }
    let outcome
    try {
      outcome = await applyLayoutFile(() => this.backend(), args.layout, {
        dryRun: flags['dry-run'],
        prune: flags.prune,
        generation: flags.generation,
        previous: flags.previous,
        concurrency: flags.concurrency,
        allowViolations: flags['allow-violations'],
        onPlan: (plan, layout) => {
          stopBar()
          planned = plan
          if (!table) return
          const lines = planLines(plan, layout)
          process.stdout.write(`${planSummary(plan)}\n${lines.length ? lines.join('\n') + '\n' : ''}`)
        },
        onProgress: (done, total, label) => {
          // plain Placement: reads and writes, call by call; placemat: one transaction, only worth a bar when large
          if (!Progress || (planned && planSize(planned) < LARGE && total <= 1)) return
          bar ??= Progress.startProgress()
          bar.update(done, total, label)
        },
      })
    } finally {
      stopBar()
    }
    const {res, seconds, refusal} = outcome
    this.endPlan({
      answer: () => ({...layoutAnswer(res, Boolean(flags['dry-run'])), seconds: Number(seconds.toFixed(3))}),
      dryRun: Boolean(flags['dry-run']),
      changes: planSize(res.plan) > 0,
      // A dry run exits as the apply would, after the plan: with the error the apply would end with.
      refusal,
      text: () => {
        if (res.applied) this.log(appliedLine(res, seconds))
      },
    })
  }
}
