import {Flags} from '@oclif/core'
import {PlacematCommand, type Column} from '../../src/cli/placemat-command.js'
import {compareNamed} from '../../src/core/listing-order.js'
import {listProviderRows, type ProviderRow} from '../../src/cli/services/provider-list.js'
import {usageError} from '../../src/cli/failure.js'

/** osc's `--resource VCPU=2` as a --resources part (VCPU:2); anything else is a usage error. */
function oscResource(v: string): string {
  const m = /^([A-Z0-9_]+)=(\d+)$/.exec(v.trim())
  if (!m) throw usageError(`--resource ${v}: CLASS=N expected`)
  return `${m[1]}:${m[2]}`
}

/**
 * --required values with osc's --forbidden traits added as osc-placement sends them: each !TRAIT
 * in the last plain list of traits (not an in: one), or a list of their own.
 */
function withForbidden(required: string[] = [], forbidden: string[] = []): string[] | undefined {
  if (!forbidden.length) return required.length ? required : undefined
  const out = [...required]
  const not = forbidden.map((t) => `!${t.trim()}`).join(',')
  let plain = out.length - 1
  while (plain >= 0 && out[plain].trim().startsWith('in:')) plain--
  if (plain < 0) out.push(not)
  else out[plain] = `${out[plain]},${not}`
  return out
}

export default class ProviderList extends PlacematCommand {
  static summary = 'List resource providers, filtered as GET /resource_providers filters.'
  static description = `Tables list the providers by name (then uuid); JSON/YAML is the body of GET
/resource_providers, in Placement's order. The STATUS column (JSON/YAML:
"disabled") says whether the provider's host is out of service: its root
provider carries COMPUTE_STATUS_DISABLED (placemat host disable, or nova
disabling the compute service).`
  static examples = [
    '<%= config.bin %> provider list',
    '<%= config.bin %> provider list --resources VCPU:4,MEMORY_MB:8192 --required HW_CPU_X86_AVX2 --json',
    '<%= config.bin %> provider list --in-tree $ROOT -c uuid,name',
  ]

  static flags = {
    name: Flags.string({description: 'exact name'}),
    uuid: Flags.string({description: 'exact uuid'}),
    'member-of': Flags.string({
      description:
        'aggregate filter: UUID, in:A,B (or A,B, as osc takes it) or !UUID, aggregates also as rack:NAME, row:NAME, room:NAME (repeatable: AND)',
      multiple: true,
    }),
    resources: Flags.string({description: 'capacity filter, e.g. VCPU:2,MEMORY_MB:1024'}),
    resource: Flags.string({
      description: "capacity filter as osc takes it: CLASS=N (repeatable), with --resources' classes",
      multiple: true,
    }),
    required: Flags.string({description: 'traits: T1,!T2 or in:T1,T2 (repeatable)', multiple: true}),
    forbidden: Flags.string({
      description: "a trait the providers must not have, as osc takes it (repeatable; --required '!T' too)",
      multiple: true,
    }),
    'in-tree': Flags.string({description: 'providers in the tree of this provider'}),
  }

  static columns: Column<ProviderRow>[] = [
    {key: 'uuid'},
    {key: 'name'},
    {key: 'generation', align: 'right'},
    {key: 'parent', aliases: ['parent_provider_uuid'], get: (r) => r.parent_provider_uuid ?? ''},
    {key: 'root', aliases: ['root_provider_uuid'], get: (r) => r.root_provider_uuid ?? ''},
    {key: 'status', get: (r) => (r.disabled ? 'disabled' : 'enabled')},
  ]

  async run(): Promise<void> {
    const {flags} = await this.parse(ProviderList)
    const body = await listProviderRows(
      await this.endpoint(),
      {
        name: flags.name,
        uuid: flags.uuid,
        memberOf: flags['member-of'],
        resources: [flags.resources, ...(flags.resource ?? []).map(oscResource)].filter(Boolean).join(',') || undefined,
        required: withForbidden(flags.required, flags.forbidden),
        inTree: flags['in-tree'],
      },
      {disabled: !this.base.ids},
    )
    // Tables by name (then uuid), whatever order the providers were made in (JSON stays Placement's body).
    const rows = [...body.resource_providers].sort(compareNamed)
    this.output(body, rows, ProviderList.columns)
  }
}
