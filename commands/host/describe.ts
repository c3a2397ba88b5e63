import {Args} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {formatResources} from '../../src/cli/render/resources.js'
import {describeHost, hostLines} from '../../src/cli/services/hosts.js'
import type {AggregateRef, HostConsumer} from '../../src/core/host-view.js'

export default class HostDescribe extends PlacematCommand {
  static summary =
    "Describe a host: status, where it is, traits, named aggregates, each provider's inventories and usage, its consumers and their groups."
  static description = `HOST is a root provider (a compute node), by name or uuid. What \`host show\` says
(in service or not and why, rack/row/room, used/capacity of its tree), its
traits and aggregates (racks, rows and rooms by name, and the names apply
files gave), then one line per inventory of each provider of its tree (used,
capacity, total, reserved, allocation ratio), then one line per consumer
holding resources there (project, user, type, what it holds on this host, its
placement groups). -c picks among the first lines alone.

JSON/YAML: GET /placemat/v1/hosts/{uuid}/description (the host record of
GET /placemat/v1/hosts/{uuid}, with traits, aggregates [{uuid, name, level,
label}], providers [{uuid, name, parent_provider_uuid, generation,
inventories {CLASS: {..., capacity, used}}, traits, aggregates}] and consumers
[{uuid, project_id, user_id, consumer_type, consumer_generation, resources,
groups}]). On plain OpenStack Placement the same, read from the host's tree:
no reason, no names of aggregates, racks, rows or rooms, groups null.`

  static examples = [
    '<%= config.bin %> host describe cn-0001',
    '<%= config.bin %> host describe cn-0001 --json',
    '<%= config.bin %> host describe cn-0001 -f value -c aggregates',
  ]
  static args = {host: Args.string({description: 'host (root provider) name or uuid', required: true})}

  async run(): Promise<void> {
    const {args} = await this.parse(HostDescribe)
    const d = await describeHost(await this.backend(), args.host)
    if (!this.textOutput) return this.outputRecord(d as unknown as Record<string, unknown>)
    const {generation, ...lines} = hostLines({...d, consumers: d.consumers.map((c) => c.uuid)})
    this.outputRecord(
      {...lines, traits: d.traits.join(','), aggregates: d.aggregates.map(aggregateText).join(', '), generation},
      d as unknown as Record<string, unknown>,
    )
    if (this.base.columns) return
    const inventories = d.providers.flatMap((p) =>
      Object.entries(p.inventories).map(([rc, inv]) => ({provider: p.name, uuid: p.uuid, resource_class: rc, ...inv})),
    )
    if (inventories.length) {
      this.log('')
      this.output(undefined, inventories, [
        {key: 'provider'},
        {key: 'resource_class', header: 'class'},
        {key: 'used', header: 'used/capacity', get: (r) => `${r.used}/${r.capacity}`},
        {key: 'total', align: 'right'},
        {key: 'reserved', align: 'right'},
        {key: 'allocation_ratio', header: 'ratio', align: 'right'},
      ])
    }
    if (d.consumers.length) {
      this.log('')
      this.output(undefined, d.consumers, [
        {key: 'uuid', header: 'consumer'},
        {key: 'project_id', header: 'project'},
        {key: 'user_id', header: 'user'},
        {key: 'consumer_type', header: 'type'},
        {key: 'resources', get: (c: HostConsumer) => formatResources(c.resources)},
        {key: 'groups', get: (c: HostConsumer) => (c.groups ?? []).join(',')},
      ])
    }
  }
}

/** "rack k1 (UUID)", "rack-a (UUID)", or the uuid of an aggregate placemat has no name for. */
const aggregateText = (a: AggregateRef) => (a.label ? `${a.label} (${a.uuid})` : a.uuid)
