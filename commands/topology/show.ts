import {Flags} from '@oclif/core'
import {PlacematCommand, type Column} from '../../src/cli/placemat-command.js'
import {NEEDS_LAYOUT} from '../../src/cli/topology/edit.js'
import {usedOf, viewClasses, viewRows, type ViewRow} from '../../src/cli/topology/view-rows.js'
import {usageError} from '../../src/cli/failure.js'

export default class TopologyShow extends PlacematCommand {
  static summary = 'The racks, rows and rooms as a tree, with capacity and usage rolled up.'

  static description = `One line per room, row, rack and host (indented), the number of hosts
below it, and per resource class "used/capacity" of the hosts' whole
provider trees (capacity as Placement counts it: (total - reserved) x
allocation_ratio), e.g. VCPU 12/64. --json/--yaml print the view as
GET /placemat/v1/topology returns it: {generation, topology: [{uuid, name,
level, capacity, used, children | hosts}]}.

On a plain OpenStack Placement endpoint the names come from the layout file
(--layout FILE) and the rest from Placement (each rack's hosts as its
aggregate has them now).`

  static examples = [
    '<%= config.bin %> topology show',
    '<%= config.bin %> topology show --no-hosts -c name,hosts,VCPU,MEMORY_MB',
    '<%= config.bin %> topology show --json',
    '<%= config.bin %> topology show --layout layout.yaml --url http://placement:8778',
  ]

  static flags = {
    hosts: Flags.boolean({
      description: 'list the hosts under their racks (--no-hosts: racks, rows and rooms only)',
      default: true,
      allowNo: true,
    }),
    layout: Flags.string({description: 'plain OpenStack Placement only: the layout file that names the racks, rows and rooms'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(TopologyShow)
    const backend = await this.backend()
    const body = await backend.topologyView({layout: flags.layout})
    if (!body) throw usageError(NEEDS_LAYOUT)
    const rows = viewRows(body.topology, {hosts: flags.hosts})
    const columns: Column<ViewRow>[] = [
      {key: 'name', get: (r) => `${'  '.repeat(r.depth)}${r.name}`},
      {key: 'level'},
      {key: 'hosts', align: 'right'},
      ...viewClasses(body.topology).map((rc): Column<ViewRow> => ({key: rc, get: (r) => usedOf(r, rc), align: 'right'})),
    ]
    if (this.pickedColumns?.includes('uuid')) columns.push({key: 'uuid'})
    if (this.textOutput && rows.length === 0) {
      this.log('No racks, rows or rooms yet: see `placemat topology apply --help` or `placemat rack create --help`.')
      return
    }
    this.output(body, rows, columns)
  }
}
