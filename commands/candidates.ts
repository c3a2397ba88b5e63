import {Flags} from '@oclif/core'
import {PlacematCommand, type Column} from '../src/cli/placemat-command.js'
import {GROUP_HELP, candidateFlags} from '../src/cli/candidates/flags.js'
import {candidateRows, type CandidateRow} from '../src/cli/candidates/rows.js'
import {searchCandidates} from '../src/cli/candidates/search.js'
import {whyEmpty} from '../src/cli/candidates/why.js'

export default class Candidates extends PlacematCommand {
  static summary = 'List allocation candidates: where a request would fit (GET /allocation_candidates).'

  static description = `Every query parameter of GET /allocation_candidates is a flag: --resources,
--required, --member-of and --in-tree for the unsuffixed group, --group for
granular groups, --group-policy, --same-subtree, --root-required, --limit.

The table has one line per candidate, in Placement's order (or by closeness
with --near/--far): the providers (names), the amounts each gives, and what is
left of those classes on each provider after this claim (capacity - used -
amount), plus the rack when the topology is known (-c row / -c room for more).
--json / --yaml print the Placement body (allocation_requests and
provider_summaries; after client-side rule checks or ordering, those of the
candidates kept). --ids prints one line per candidate: its provider uuids,
separated by spaces, for shell loops.

${GROUP_HELP}

No candidate is not an error: an empty table (exit 0), and one line on
stderr saying which part of the request emptied the candidates, e.g.
"no candidates: 12 hosts have the resources; none has HW_CPU_X86_AVX512F"
(placemat: GET /placemat/v1/allocation_candidates/why; plain Placement:
worked out here from a read of every provider).

osc-placement's \`openstack allocation candidate list --resource VCPU=1\` is
\`placemat allocation candidate list --resource VCPU=1\` (or \`placemat
candidates\`) too.`

  static examples = [
    '<%= config.bin %> candidates --resources VCPU:2,MEMORY_MB:4096 --required HW_CPU_X86_AVX2 --limit 10',
    '<%= config.bin %> candidates --resources VCPU:2,MEMORY_MB:4096 --group _NET:resources=SRIOV_NET_VF:1,required=CUSTOM_PHYSNET0 --group-policy isolate',
    '<%= config.bin %> candidates --group _COMPUTE:resources=VCPU:2 --group _NET:resources=SRIOV_NET_VF:1 --group-policy none --same-subtree _COMPUTE,_NET',
    '<%= config.bin %> candidates --resources VCPU:4 --different row:$DB1,$DB2 --near $APP1',
    '<%= config.bin %> candidates --resources VCPU:1 --ids | wc -l',
  ]

  static hiddenAliases = ['allocation:candidate:list']

  static flags = {
    ...candidateFlags,
    ids: Flags.boolean({description: 'one line per candidate: its provider uuids', helpGroup: 'OUTPUT', exclusive: ['json', 'yaml']}),
  }

  static columns: Column<CandidateRow>[] = [
    {key: 'index', header: '#', align: 'right'},
    {key: 'providers'},
    {key: 'resources'},
    {key: 'free_after', header: 'left after'},
    {key: 'rack'},
    {key: 'row'},
    {key: 'room'},
  ]

  async run(): Promise<void> {
    const {flags} = await this.parse(Candidates)
    const table = this.printsRows && !flags.ids
    const endpoint = await this.endpoint()
    const search = await searchCandidates(endpoint, flags, {keptNames: table, topology: table ? 'optional' : undefined})
    if (search.body.allocation_requests.length === 0) {
      const why = await whyEmpty(endpoint, search)
      if (why) process.stderr.write(`placemat: no candidates: ${why}\n`)
    }
    if (flags.ids) {
      for (const ar of search.body.allocation_requests) this.log(Object.keys(ar.allocations).join(' '))
      return
    }
    const rows = table ? candidateRows(search) : []
    const shown = this.base.columns
      ? Candidates.columns
      : Candidates.columns.filter((c) => !['row', 'room'].includes(c.key) && (c.key !== 'rack' || search.topology))
    this.output(search.body, rows, shown)
  }
}
