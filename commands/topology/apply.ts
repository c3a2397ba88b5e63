import {Args, Flags} from '@oclif/core'
import {ApiError} from '../../src/client/client.js'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {SENTENCES} from '../../src/cli/output.js'
import type {ProgressHandle} from '../../src/cli/components/Progress.js'
import {usageError, withContext} from '../../src/cli/failure.js'
import {ALLOW_HINT, allowViolationsFlag, isGroupViolation} from '../../src/cli/groups/flags.js'
import {layoutBody, readLayoutFile} from '../../src/cli/topology/layout-file.js'
import {APPLY_KEYS} from '../../src/cli/apply/apply-file.js'
import {appliedLine, layoutAnswer, planLines, planSize, planSummary} from '../../src/cli/topology/plan-text.js'
import {layoutNodes, type TopologyPlan} from '../../src/core/topology.js'

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
    // A datacenter's one file (providers for placemat apply, and the layout) is taken too: its layout part.
    const doc = readLayoutFile(args.layout, {skipKeys: APPLY_KEYS})
    if (!flags.prune && layoutNodes(layoutBody(doc)).size === 0) {
      throw usageError(
        `${args.layout} names no rack, row or room: without --prune that changes nothing; to empty the topology, give --prune`,
      )
    }
    const previous = flags.previous ? layoutBody(readLayoutFile(flags.previous, {skipKeys: APPLY_KEYS})) : undefined
    const backend = await this.backend()
    const table = this.textOutput
    const tty = Boolean(process.stdout.isTTY) && table
    const Progress = tty ? await import('../../src/cli/components/Progress.js') : undefined
    let bar: ProgressHandle | undefined
    let planned: TopologyPlan | undefined
    const stopBar = () => {
      bar?.stop()
      bar = undefined
    }
    const onPlan = (plan: TopologyPlan) => {
      stopBar()
      planned = plan
      if (!table) return
      const lines = planLines(plan, doc)
      process.stdout.write(`${planSummary(plan)}\n${lines.length ? lines.join('\n') + '\n' : ''}`)
    }
    const onProgress = (done: number, total: number, label: string) => {
      // plain Placement: reads and writes, call by call; placemat: one transaction, only worth a bar when large
      if (!Progress || (planned && planSize(planned) < LARGE && total <= 1)) return
      bar ??= Progress.startProgress()
      bar.update(done, total, label)
    }
    /** The error the apply ends with, in words that say what to do about it. */
    const explained = (err: unknown) => {
      if (isGroupViolation(err)) return withContext(err as ApiError, '', ALLOW_HINT)
      if (err instanceof ApiError && err.status === 409 && planned) {
        // Running again only helps when the generation was the plan's own, not one the file or flag pins.
        const pinned =
          flags.generation !== undefined
            ? '--generation'
            : doc.generation !== undefined
              ? `the file's "generation: ${doc.generation}"`
              : undefined
        const advice = pinned
          ? `; nothing was applied. ${pinned} is stale: read the layout again (placemat topology layout), or drop the generation to apply over the change`
          : '; nothing was applied (run again)'
        return withContext(
          err,
          pinned ? 'the topology changed since the file was read: ' : 'the topology changed since the plan was made: ',
          advice,
        )
      }
      return err
    }
    const start = performance.now()
    let res
    try {
      res = await backend.applyLayout(layoutBody(doc), {
        dryRun: flags['dry-run'],
        generation: flags.generation ?? doc.generation,
        allowViolations: flags['allow-violations'],
        prune: flags.prune,
        previous,
        concurrency: flags.concurrency,
        onPlan,
        onProgress,
      })
    } catch (err) {
      stopBar()
      throw explained(err)
    }
    stopBar()
    const seconds = (performance.now() - start) / 1000
    this.endPlan({
      answer: () => ({...layoutAnswer(res, Boolean(flags['dry-run'])), seconds: Number(seconds.toFixed(3))}),
      dryRun: Boolean(flags['dry-run']),
      changes: planSize(res.plan) > 0,
      // A dry run exits as the apply would, after the plan: with the error the apply would end with.
      refusal: res.refusal && (explained(res.refusal) as ApiError),
      text: () => {
        if (res.applied) this.log(appliedLine(res, seconds))
      },
    })
  }
}
