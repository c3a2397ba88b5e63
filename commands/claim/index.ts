import {Args, Flags} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import type {Level} from '../../src/cli/candidates/anchors.js'
import type {ListedProvider} from '../../src/core/wire.js'
import {GROUP_HELP, candidateFlags} from '../../src/cli/candidates/flags.js'
import {claim} from '../../src/cli/services/claim.js'
import {spread, spreadConsumers} from '../../src/cli/services/spread.js'
import {allowViolationsFlag, refusedForGroups} from '../../src/cli/groups/flags.js'

const describeAllocations = (allocations: Record<string, {resources: Record<string, number>}>, providers?: Map<string, ListedProvider>) =>
  Object.entries(allocations)
    .map(
      ([rp, a]) =>
        `${providers?.get(rp)?.name ?? rp}: ${Object.entries(a.resources)
          .map(([rc, n]) => `${rc}=${n}`)
          .join(',')}`,
    )
    .join('; ')

/** claim --count --spread: a line per consumer claimed, with where it went (the level's column). */
const spreadColumns = (level: string) => [
  {key: 'label', header: 'consumer'},
  {key: 'consumer_uuid', header: 'uuid'},
  {key: 'node', header: level},
  {key: 'candidate', header: '#', align: 'right' as const},
  {key: 'resources'},
]

/** A claim's key/value lines, then the keys of its JSON document that the lines have not (-c takes both). */
const CLAIM_KEYS = [
  'consumer',
  'candidate',
  'alternates',
  'attempts',
  'allocations',
  'via',
  'consumer_uuid',
  'refreshes',
  'consumer_generation',
]

export default class Claim extends PlacematCommand {
  static summary = 'Claim resources for a consumer: the first allocation candidate that can still be written.'

  static description = `Reads the allocation candidates for the request (every \`placemat candidates\`
flag works here) and writes the first one for CONSUMER with its consumer
generation. When the write is refused (409: another claimer took the
capacity, or a concurrent update), the next candidate is tried at once, down
the list, as Nova's scheduler goes through its alternates; a consumer
generation conflict re-reads the generation and tries the same candidate
again. Prints which candidate won (its position in the list) and how many
alternates were left after it. A consumer that already holds allocations is
refused (exit 4) unless --replace. No candidate, or none could be written:
exit 4. Project, user and type default to what is known of the consumer: on
placemat also when it holds nothing (a record without allocations, or what it
was when claim move took its allocations away). JSON/YAML: {consumer_uuid,
candidate, alternates, attempts, refreshes, consumer_generation, allocations,
via}.

Topology rules (--same / --different): on a placemat endpoint (daemon or
--db) the write, POST /placemat/v1/claims, checks the rules against
the allocations at the moment of the write, in the write transaction; a rule
broken by a concurrent claim (409 placemat.affinity_violation) makes the
claim read the candidates again. Against plain Placement the rules are only
member_of filters: they are checked when the candidates are read, not at the
write.

Spread: --count N --spread LEVEL claims N consumers, each in a different
rack/row/room, in one transaction (placemat: POST /placemat/v1/claims with all
of them and the rules between them; plain Placement: one POST /allocations).
CONSUMER is then a comma list of N uuids, a uuid prefix (XXXXXXXX-...: the
index from 1 is zero-padded onto it), or a name (consumer uuids are
uuid5("consumer:NAME-i") in placemat's namespace). When N distinct places
cannot be found, nothing is claimed (exit 4).

Placement groups: --group NAME (a value without "=") makes CONSUMER a member
of the placement group NAME (see \`placemat group\`). The candidates are those
the rules of its groups allow — NAME's and those of every group CONSUMER is
already a member of, --group or not — with every member where it is now (a
soft group: all of them, those that keep the rule first). On placemat every
claim is written with POST /placemat/v1/claims, which checks those rules
again in the write transaction: a concurrent claimer that got there first
makes the claim read the candidates again. Breaking a rule needs
--allow-violations. Only placemat keeps groups (plain Placement: a --groups
file, checked when the candidate is chosen).

No candidate (exit 4): the message says which part of the request emptied
them, e.g. "no host has 64 VCPU free (the most free: cn-07 with 48)", "3 hosts
fit; all are disabled (--include-disabled to use them)" or "2 hosts fit; the
anti-affinity rule of group web (by rack) excludes them".

${GROUP_HELP}`

  static examples = [
    '<%= config.bin %> claim $SERVER --resources VCPU:2,MEMORY_MB:4096 --project $PROJECT --user $USER --consumer-type INSTANCE',
    '<%= config.bin %> claim $SERVER --resources VCPU:2 --different rack:$PEER1,$PEER2 --project $P --user $U --json',
    '<%= config.bin %> claim --count 3 --spread row db --resources VCPU:8,MEMORY_MB:32768 --project $P --user $U',
    '<%= config.bin %> claim $SERVER --group db-replicas --resources VCPU:8 --project $P --user $U',
  ]

  static printed = (flags: {spread?: string}) => (flags.spread ? {columns: spreadColumns(flags.spread)} : {keys: CLAIM_KEYS})
  static args = {consumer: Args.string({description: 'consumer uuid (with --count: a list, a uuid prefix or a name)', required: true})}

  static flags = {
    ...candidateFlags,
    project: Flags.string({
      description: 'project id (default: what is known of the consumer; needed for a new one)',
      helpGroup: 'CONSUMER',
    }),
    user: Flags.string({description: 'user id (default: what is known of the consumer; needed for a new one)', helpGroup: 'CONSUMER'}),
    'consumer-type': Flags.string({
      description: 'consumer type, e.g. INSTANCE (default: what is known of the consumer, or none)',
      helpGroup: 'CONSUMER',
    }),
    replace: Flags.boolean({description: 'replace the allocations the consumer already has', helpGroup: 'CONSUMER'}),
    count: Flags.integer({description: 'claim this many consumers (with --spread)', min: 1, helpGroup: 'SPREAD', dependsOn: ['spread']}),
    spread: Flags.string({
      description: 'each consumer in a different rack, row or room',
      options: ['rack', 'row', 'room'],
      helpGroup: 'SPREAD',
    }),
    ...allowViolationsFlag,
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Claim)
    const own = {project: flags.project, user: flags.user, consumerType: flags['consumer-type']}
    if (flags.spread) {
      const consumers = spreadConsumers(args.consumer, flags.count)
      const out = await spread(await this.endpoint(), flags, consumers, flags.spread as Level, own, flags.replace)
      const level = out.level
      const body = {
        level,
        via: out.via,
        attempts: out.attempts,
        claims: out.claims.map((c) => ({
          consumer_uuid: c.consumer_uuid,
          label: c.label,
          candidate: c.candidate,
          [level]: c.node,
          allocations: c.allocations,
        })),
      }
      const rows = out.claims.map((c) => ({...c, resources: describeAllocations(c.allocations, out.search.providers)}))
      this.output(body, rows, spreadColumns(level))
      return
    }
    const out = await refusedForGroups(async () =>
      claim(await this.endpoint(), flags, {
        consumer: args.consumer,
        own,
        replace: flags.replace,
        names: this.textOutput,
        allowViolations: flags['allow-violations'],
      }),
    )
    const body = {
      consumer_uuid: out.consumer_uuid,
      candidate: out.candidate,
      alternates: out.alternates,
      attempts: out.attempts,
      refreshes: out.refreshes,
      consumer_generation: out.consumer_generation,
      allocations: out.allocations,
      via: out.via,
    }
    if (!this.textOutput) return this.outputRecord(body)
    this.outputRecord(
      {
        consumer: out.consumer_uuid,
        candidate: `${out.candidate} of ${out.candidate + out.alternates}`,
        alternates: out.alternates,
        attempts: out.attempts,
        allocations: describeAllocations(out.allocations, out.providers),
        via: out.via,
      },
      body,
    )
  }
}
