/**
 * The base of the rack/row/room commands: each is one edit of the layout document,
 * made by read-modify-write (src/cli/topology/edit.ts editLayout) and printed as
 * the plan of what changed.
 */
import {Flags} from '@oclif/core'
import type {Layout} from '../core/topology.js'
import {PlacementError} from '../core/errors.js'
import {PlacematCommand} from './placemat-command.js'
import {SENTENCES} from './output.js'
import {Failure, withContext} from './failure.js'
import {ALLOW_HINT, allowViolationsFlag, isGroupViolation, refusedForGroups} from './groups/flags.js'
import {dryRunRefusal, planLines, planSize, planSummary} from './topology/plan-text.js'

export const editFlags = {
  'dry-run': Flags.boolean({description: 'print what would change and change nothing'}),
  ...allowViolationsFlag,
  layout: Flags.string({
    description: 'plain OpenStack Placement only: the layout file that records the names (read, edited and written back)',
    helpGroup: 'CONNECTION',
  }),
}

export const PLAIN_NOTE = `On a plain OpenStack Placement endpoint (no /placemat/v1) the racks, rows
and rooms are aggregates only: Placement cannot store their names, so pass
the layout file with --layout FILE; it is read, edited, applied (each
host's aggregates set with its generation) and written back.`

export abstract class TopologyEditCommand extends PlacematCommand {
  static printed = SENTENCES

  /** Runs one edit and prints the plan it made (JSON/YAML: {transport, dry_run, applied, plan}). */
  protected async edit(
    flags: {'dry-run'?: boolean; layout?: string; 'allow-violations'?: boolean},
    fn: (doc: Layout) => void,
  ): Promise<void> {
    const dryRun = Boolean(flags['dry-run'])
    // An edit of the document refused (no such rack, one that exists) is said as it is, not as an HTTP answer.
    const edit = (doc: Layout) => {
      try {
        fn(doc)
      } catch (err) {
        if (err instanceof PlacementError)
          throw new Failure(err.status === 404 ? 'not_found' : err.status === 409 ? 'conflict' : 'bad_request', err.detail)
        throw err
      }
    }
    const backend = await this.backend()
    const res = await refusedForGroups(() =>
      backend.editLayout(edit, {dryRun, files: {layout: flags.layout}, allowViolations: flags['allow-violations']}),
    )
    // A dry run exits as the edit would, after the plan: with the error the edit would end with.
    const refusal = res.refusal && dryRunRefusal(isGroupViolation(res.refusal) ? withContext(res.refusal, '', ALLOW_HINT) : res.refusal)
    if (!this.textOutput) {
      this.outputRecord({transport: res.transport, dry_run: dryRun, applied: res.applied, plan: res.plan})
      if (refusal) throw refusal
      return
    }
    const lines = planLines(res.plan, res.layout)
    this.log(planSummary(res.plan).replace(/^Plan: /, dryRun ? 'Plan: ' : 'Changed: '))
    if (lines.length) this.log(lines.join('\n'))
    if (dryRun && planSize(res.plan) > 0) this.log('Dry run: nothing was changed.')
    if (refusal) throw refusal
  }
}
