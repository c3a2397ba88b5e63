import {Args, Flags} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {move} from '../../src/cli/services/claim.js'
import {formatResources} from '../../src/cli/render/resources.js'
import {allowViolationsFlag, refusedForGroups} from '../../src/cli/groups/flags.js'

/** What claim move prints (a record, as text and JSON alike). */
const MOVE_KEYS = ['consumer_uuid', 'migration_uuid', 'allocations', 'overwrote', 'consumer_type']

export default class ClaimMove extends PlacematCommand {
  static summary = "Hand a consumer's allocations to a migration consumer, atomically (as Nova's move operations do)."
  static description = `One write: the migration consumer (--to) gets the consumer's allocations and
the consumer's are emptied, in one transaction. The migration consumer gets
the consumer's project and user, and as its type --consumer-type, else the
type it has (or had, on placemat, when it gave its own allocations away:
moving them back is a revert, and the consumer gets its own type back), else
MIGRATION when the consumer that gives has a type, INSTANCE when that is a
MIGRATION, and none when it has none (written at microversion 1.37, so no
type is invented). What the migration consumer held before is overwritten (a
warning says so). The consumer then holds nothing: claim it again on the
destination (placemat claim CONSUMER ..., which on placemat takes its
project, user and type from what placemat kept of it) and release the
migration consumer when the move is done, or move the allocations back to
revert. A consumer without allocations is not found (exit 3).

On placemat the write is POST /placemat/v1/moves, which checks the placement
groups of both consumers in the transaction: a move that would make the
receiving consumer break its group's rule is refused (exit 4) unless
--allow-violations. On plain Placement it is one POST /allocations with both
consumer generations (a concurrent update is read again and retried).`
  static examples = [
    '<%= config.bin %> claim move $SERVER --to $MIGRATION',
    '<%= config.bin %> claim move $MIGRATION --to $SERVER  # revert',
  ]
  static printed = {keys: MOVE_KEYS}
  static args = {consumer: Args.string({description: 'consumer uuid whose allocations move', required: true})}
  static flags = {
    to: Flags.string({description: 'the migration consumer uuid that receives them', required: true}),
    'consumer-type': Flags.string({
      description:
        'consumer type of the receiving consumer (default: its own; else MIGRATION, INSTANCE when moving back from a MIGRATION, none from a consumer of none)',
    }),
    ...allowViolationsFlag,
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(ClaimMove)
    const backend = await this.backend()
    const out = await refusedForGroups(() =>
      move(backend, args.consumer, flags.to, flags['consumer-type'], {allowViolations: flags['allow-violations']}),
    )
    if (out.overwrote) process.stderr.write(`placemat: warning: the allocations ${flags.to} held were overwritten\n`)
    this.outputRecord({
      consumer_uuid: out.consumer_uuid,
      migration_uuid: out.migration_uuid,
      // Text: each provider with what it holds (`uuid: VCPU=2, MEMORY_MB=4096; uuid: ...`).
      allocations: this.textOutput
        ? Object.entries(out.allocations)
            .map(([rp, a]) => `${rp}: ${formatResources(a.resources)}`)
            .join('; ')
        : out.allocations,
      overwrote: out.overwrote,
      consumer_type: out.consumer_type,
    })
  }
}
