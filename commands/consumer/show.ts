import {Args} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {formatResources} from '../../src/cli/render/resources.js'
import {namedConsumer} from '../../src/cli/services/spread.js'
import {showConsumer} from '../../src/cli/services/consumers.js'
import type {ConsumerHolding} from '../../src/core/consumer-list.js'
import {compareNamed} from '../../src/core/listing-order.js'

export default class ConsumerShow extends PlacematCommand {
  static summary = 'Show a consumer: project, user, type, generation, groups, its hosts and where they are, what it holds.'
  static description = `CONSUMER is a uuid, or a name \`claim --count\` gave (web-3). Key and value lines
(hosts with their rack/row/room), then one line per provider it holds resources
of, by name: provider, its host, amounts. A consumer the endpoint knows
nothing of is exit 3. A consumer that gave its allocations away
with \`claim move\` shows what it was and to whom it gave them (moved_to).
JSON/YAML: GET /placemat/v1/consumers/{uuid} ({uuid, project_id, user_id,
consumer_type, consumer_generation, allocations, moved_to?, providers: [{uuid,
name, host, resources}], hosts: [{uuid, name, rack, row, room, disabled}],
groups}). On plain OpenStack Placement, from GET /allocations/{consumer}: no
groups (null) and no rack, row or room names.`

  static examples = [
    '<%= config.bin %> consumer show $SERVER',
    '<%= config.bin %> consumer show web-3 --json',
    '<%= config.bin %> consumer show $SERVER -f value -c groups',
  ]
  static args = {consumer: Args.string({description: 'consumer uuid, or a name `claim --count` gave', required: true})}

  async run(): Promise<void> {
    const {args} = await this.parse(ConsumerShow)
    const view = await showConsumer(await this.backend(), namedConsumer(args.consumer))
    if (!this.textOutput) return this.outputRecord(view as unknown as Record<string, unknown>)
    const where = (h: (typeof view.hosts)[number]) => {
      const at = (['rack', 'row', 'room'] as const).flatMap((l) => (h[l] === null ? [] : [`${l} ${h[l]}`])).join(', ')
      return `${h.name}${at ? ` (${at})` : ''}${h.disabled ? ' disabled' : ''}`
    }
    const record: Record<string, unknown> = {
      uuid: view.uuid,
      project: view.project_id,
      user: view.user_id,
      type: view.consumer_type ?? '',
      generation: view.consumer_generation ?? '',
      groups: view.groups === null ? '' : view.groups.join(','),
      hosts: view.hosts.map(where).join(', '),
    }
    if (view.moved_to) record.moved_to = view.moved_to
    this.outputRecord(record)
    // -c picks among the lines above; the providers follow only in a whole view.
    if (this.base.columns || !view.providers.length) return
    this.log('')
    this.output(undefined, [...view.providers].sort(compareNamed), [
      {key: 'name', header: 'provider'},
      {key: 'uuid'},
      {key: 'host'},
      {key: 'resources', get: (p: ConsumerHolding) => formatResources(p.resources)},
    ])
  }
}
