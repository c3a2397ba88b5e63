import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {listHosts, type HostListing} from '../../src/cli/services/hosts.js'
import {usedOf, viewClasses} from '../../src/cli/topology/view-rows.js'

export default class HostList extends PlacematCommand {
  static summary = 'List the hosts: in service or not, where they are, their consumers, capacity and usage.'
  static description = `A host is the root of a provider tree that holds inventory (on itself, as a
bare-metal node, or on its children, as a compute node's NUMA nodes); a
provider that shares its inventory through an aggregate (shared storage) is
never one. One line per host, by name: status, rack, row, room, how many
consumers hold resources in its tree, and USED/CAPACITY of each class over its
tree. JSON/YAML: GET /placemat/v1/hosts ({hosts: [{uuid, name, generation,
disabled, disabled_reason, rack, row, room, consumers, capacity, used}]}); on
plain Placement the same, read from the cloud (no reasons, no rack names).`

  static examples = [
    '<%= config.bin %> host list',
    '<%= config.bin %> host list -f value -c name -c rack',
    '<%= config.bin %> host list --json',
  ]

  async run(): Promise<void> {
    await this.parse(HostList)
    const hosts = await listHosts(await this.backend())
    const classes = viewClasses(hosts)
    const columns = [
      {key: 'name'},
      {key: 'uuid'},
      {key: 'status', get: (h: HostListing) => (h.disabled ? 'disabled' : 'enabled')},
      {key: 'rack', get: (h: HostListing) => h.rack ?? ''},
      {key: 'row', get: (h: HostListing) => h.row ?? ''},
      {key: 'room', get: (h: HostListing) => h.room ?? ''},
      {key: 'consumers', align: 'right' as const},
      // A class the host does not have is blank, as in topology show.
      ...classes.map((rc) => ({key: rc, get: (h: HostListing) => usedOf(h, rc)})),
    ]
    this.output({hosts}, hosts, columns)
  }
}
