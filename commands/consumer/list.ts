import {Flags} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {formatResources} from '../../src/cli/render/resources.js'
import {listConsumers} from '../../src/cli/services/consumers.js'
import {resolveProvider} from '../../src/cli/backend/provider-lookup.js'
import type {ConsumerListing} from '../../src/core/consumer-list.js'

export default class ConsumerList extends PlacematCommand {
  static summary = 'List consumers: who they are, what they hold, on which hosts, in which placement groups.'
  static description = `Every consumer with a record, in the order they were written; --provider keeps
those holding resources in the tree of that provider (a host: on that host),
--project those of one project, --group the members of a placement group
(the filters add up). One line per consumer: uuid, project, user, type,
consumer generation, what it holds (summed over its providers), its hosts and
its placement groups. JSON/YAML: GET /placemat/v1/consumers (?in_tree=,
?project_id=, ?group=): each consumer's record (allocations per provider,
project, user, type, generation, times) with "hosts" and "groups".

On plain OpenStack Placement the same list is read from the standard API
(the allocations of each provider, or of the --provider tree, then each
consumer's GET /allocations): it keeps no placement groups, so "groups" is
null and --group is refused (exit 2).`

  static examples = [
    '<%= config.bin %> consumer list',
    '<%= config.bin %> consumer list --provider cn-0001 --ids',
    '<%= config.bin %> consumer list --project $PROJECT --group db-replicas -f value -c uuid,hosts',
  ]

  static flags = {
    provider: Flags.string({
      description: 'only consumers holding resources in the tree of this provider (name or uuid; a host: on that host)',
    }),
    project: Flags.string({description: 'only consumers of this project'}),
    group: Flags.string({description: 'only members of this placement group (placemat only)'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(ConsumerList)
    const backend = await this.backend()
    const inTree = flags.provider === undefined ? undefined : (await resolveProvider(backend.client, flags.provider)).uuid
    const {consumers, groupsKept} = await listConsumers(backend, {inTree, project: flags.project, group: flags.group})
    if (!groupsKept && this.textOutput && !this.base.ids) {
      process.stderr.write('placemat: warning: plain OpenStack Placement keeps no placement groups: the groups column is empty\n')
    }
    this.output({consumers}, consumers, consumerColumns)
  }
}

/** What a consumer holds, summed over its providers. */
const held = (c: ConsumerListing) => {
  const sum: Record<string, number> = {}
  for (const a of Object.values(c.allocations)) for (const [rc, n] of Object.entries(a.resources)) sum[rc] = (sum[rc] ?? 0) + n
  return sum
}

const consumerColumns = [
  {key: 'uuid'},
  {key: 'project_id', header: 'project'},
  {key: 'user_id', header: 'user'},
  {key: 'consumer_type', header: 'type'},
  {key: 'consumer_generation', header: 'generation', align: 'right' as const},
  {key: 'resources', get: (c: ConsumerListing) => formatResources(held(c))},
  {key: 'hosts', get: (c: ConsumerListing) => c.hosts.join(',')},
  {key: 'groups', get: (c: ConsumerListing) => (c.groups ?? []).join(',')},
]
