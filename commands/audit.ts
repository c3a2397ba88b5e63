import {Flags} from '@oclif/core'
import {PlacematCommand, type Column} from '../src/cli/placemat-command.js'
import {audit, countByKind, deleteOrphans, findingRows, readKnownConsumers, type FindingRow} from '../src/cli/services/audit.js'
import {failure} from '../src/cli/failure.js'
import {groupFileFlags} from '../src/cli/groups/flags.js'

/** Exit code when findings remain and --exit-code is given. */
export const FINDINGS_EXIT = 7

export default class Audit extends PlacematCommand {
  static summary = 'Find orphan allocations, providers over capacity, incomplete consumers and broken placement group rules.'

  static description = `Checks the whole placement database for:
- orphan: allocations of consumers not in --known-consumers (as nova-manage placement audit finds them: deleted instances, finished migrations); skipped without the file
- over-capacity: a provider uses more of a class than its capacity, int((total-reserved)*allocation_ratio): possible after an inventory was lowered (Placement allows that), or it uses a class it has no inventory of
- empty-consumer: a consumer record holding no allocations (placemat endpoints only: the standard API cannot list them)
- incomplete: a consumer whose project or user is missing or is Placement's placeholder for writes made before microversion 1.8 (00000000-0000-0000-0000-000000000000)
- group: a placement group whose rule is broken where its members are now: the group, its rule, and the members in each domain involved (placemat endpoints, or plain Placement with --groups FILE and --layout FILE; soft groups too, marked "(soft)")

--known-consumers FILE: one consumer uuid per line (blank lines and #
comments ignored), or a JSON or YAML list of uuids; "-" reads stdin.
--delete removes every orphan's allocations (DELETE /allocations/{uuid});
it needs --known-consumers.

On a placemat endpoint (or --db) everything is read in two calls; on a
plain Placement endpoint, per provider (inventories, usages, allocations)
and per consumer (project and user).

Exit codes:
- 0: no findings; or findings without --exit-code; or --delete fixed all
- 7: findings remain and --exit-code was given
- 1: an error, e.g. a --delete call failed (the other orphans are deleted)
- 2: usage: bad flags, an unreadable or invalid --known-consumers file, --delete without --known-consumers
- 5: the endpoint cannot be reached`

  static examples = [
    '<%= config.bin %> audit',
    {
      description: 'Orphans, against the instances nova knows (openstack server list --all-projects -f value -c ID > known.txt):',
      command: '<%= config.bin %> audit --known-consumers known.txt',
    },
    '<%= config.bin %> audit --known-consumers known.txt --delete --exit-code',
  ]

  static flags = {
    'known-consumers': Flags.string({description: 'file of known consumer uuids (one per line, or a JSON/YAML list)'}),
    delete: Flags.boolean({description: 'delete the allocations of orphan consumers', dependsOn: ['known-consumers']}),
    'exit-code': Flags.boolean({description: `exit ${FINDINGS_EXIT} when findings remain`}),
    concurrency: Flags.integer({description: 'calls in flight on a plain Placement endpoint', default: 16, min: 1, max: 256}),
    ...groupFileFlags,
  }

  static columns: Column<FindingRow>[] = [{key: 'kind'}, {key: 'subject'}, {key: 'detail'}]
  // --delete writes: its table's -c is checked before.
  static printed = {columns: Audit.columns}

  async run(): Promise<void> {
    const {flags} = await this.parse(Audit)
    const known = flags['known-consumers'] ? readKnownConsumers(flags['known-consumers']) : undefined
    const backend = await this.backend()
    const load = () => backend.loadCloud({consumers: true, consumerOwners: true, concurrency: flags.concurrency})
    // Groups: placemat's own, or on plain Placement those of --groups FILE (else none to check).
    const readGroups = async () => (await (await backend.groups(flags))?.list()) ?? []
    const [view, groups] = await Promise.all([load(), readGroups()])
    const result = audit(view, known, groups)
    let failed = 0
    let left = result.findings
    if (flags.delete && result.findings.some((f) => f.kind === 'orphan_allocations')) {
      failed = (await deleteOrphans(backend.client, result.findings, Math.min(flags.concurrency, 8))).failed
      // What is left is what a fresh look finds (a deletion may also end an over-capacity).
      left = audit(await load(), known, await readGroups()).findings
    }
    const doc = {
      transport: backend.kind,
      checked: result.checked,
      summary: {findings: result.findings.length, remaining: left.length, ...countByKind(result.findings)},
      findings: result.findings,
    }
    if (!this.textOutput) {
      this.outputRecord(doc)
    } else {
      const c = doc.summary
      if (result.findings.length) this.output(doc, findingRows(result.findings, view), Audit.columns)
      const parts = [
        `${c.orphan_allocations} orphan`,
        `${c.over_capacity} over capacity`,
        `${c.empty_consumer} empty consumer`,
        `${c.incomplete_consumer} incomplete`,
        `${c.group_violation} broken group rule${c.group_violation === 1 ? '' : 's'}`,
      ]
      const deleted = result.findings.filter((f) => f.kind === 'orphan_allocations' && f.deleted).length
      const checked = `${result.checked.providers} providers, ${result.checked.consumers} consumers checked`
      const fixed = flags.delete && c.orphan_allocations ? `; ${deleted} orphan(s) deleted, ${left.length} finding(s) left` : ''
      this.log(
        result.findings.length
          ? `${result.findings.length} finding(s): ${parts.join(', ')}${fixed} (${checked}).`
          : `No findings (${checked}).`,
      )
      if (!known) this.log('Orphan allocations not checked: give --known-consumers FILE.')
    }
    if (failed) throw failure(`${failed} orphan deletion(s) failed`)
    if (flags['exit-code'] && left.length) this.exit(FINDINGS_EXIT)
  }
}
