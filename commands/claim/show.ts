import {Args} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {shownConsumer} from '../../src/cli/services/allocations.js'
import {namedConsumer} from '../../src/cli/services/spread.js'
import {fetchLayout, placementInLayout, providersByUuid, readLayoutFile, topologyFromLayout} from '../../src/cli/candidates/anchors.js'
import {candidateFlags} from '../../src/cli/candidates/flags.js'
import {compareNamed} from '../../src/core/listing-order.js'
import {formatResources} from '../../src/cli/render/resources.js'

export default class ClaimShow extends PlacematCommand {
  static summary = 'Show what a consumer holds, and in which rack, row and room.'
  static description = `One line per provider, by name: name, uuid, amounts and its host's rack/row/room
(from the placemat topology, or --layout FILE against plain Placement). A
consumer the endpoint knows nothing of is exit 3, as for consumer show. JSON/YAML:
the body of GET /allocations/{consumer} plus "topology": {rack, row, room}
(names) when the topology is known.`
  static examples = [
    '<%= config.bin %> claim show $SERVER',
    '<%= config.bin %> claim show $SERVER --yaml',
    '<%= config.bin %> claim show web-3  # a name claim web --count 5 gave',
  ]
  static args = {consumer: Args.string({description: 'consumer uuid, or a name `claim --count` gave (web-3)', required: true})}
  static flags = {layout: candidateFlags.layout}

  async run(): Promise<void> {
    const {args, flags} = await this.parse(ClaimShow)
    const endpoint = await this.endpoint()
    const {client} = endpoint
    const [body, providers, layout] = await Promise.all([
      shownConsumer(endpoint, namedConsumer(args.consumer)),
      providersByUuid(client),
      flags.layout ? readLayoutFile(flags.layout) : fetchLayout(endpoint),
    ])
    const topo = layout ? topologyFromLayout(layout, providers) : undefined
    const names = (uuids: string[]) => {
      const where = placementInLayout(topo!, providers, uuids)
      return Object.fromEntries(
        (['rack', 'row', 'room'] as const).map((l) => [l, [...where[l]].map((u) => topo!.nodes.get(u)?.name ?? u).sort()]),
      )
    }
    const uuids = Object.keys(body.allocations ?? {})
    const data = topo && uuids.length ? {...body, topology: names(uuids)} : body
    const rows = uuids.map((rp) => {
      const where = topo ? names([rp]) : {rack: [], row: [], room: []}
      return {
        provider: providers.get(rp)?.name ?? rp,
        uuid: rp,
        resources: formatResources(body.allocations[rp].resources),
        rack: where.rack.join(','),
        row: where.row.join(','),
        room: where.room.join(','),
      }
    })
    rows.sort((a, b) => compareNamed({name: a.provider, uuid: a.uuid}, {name: b.provider, uuid: b.uuid}))
    this.output(data, rows, [{key: 'provider'}, {key: 'uuid'}, {key: 'resources'}, {key: 'rack'}, {key: 'row'}, {key: 'room'}])
  }
}
