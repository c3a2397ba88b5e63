import {Args} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {hostLines, showHost} from '../../src/cli/services/hosts.js'

export default class HostShow extends PlacematCommand {
  static summary = 'Show a host: in service or not (and why), where it is, its consumers, capacity and usage.'
  static description = `HOST is a root provider (a compute node), by name or uuid. A host is out of
service when it carries COMPUTE_STATUS_DISABLED (placemat host disable, or
nova disabling its compute service); placemat keeps the reason given to
host disable, and shows it while the host stays disabled. JSON/YAML: GET
/placemat/v1/hosts/{uuid} ({uuid, name, generation, disabled,
disabled_reason, rack, row, room, consumers, capacity, used}); on plain
Placement the same, read from the host's tree (no reason, no rack names).`

  static examples = ['<%= config.bin %> host show cn-0001', '<%= config.bin %> host show cn-0001 -f value -c status']
  static args = {host: Args.string({description: 'host (root provider) name or uuid', required: true})}

  async run(): Promise<void> {
    const {args} = await this.parse(HostShow)
    const host = await showHost(await this.backend(), args.host)
    if (!this.textOutput) return this.outputRecord(host as unknown as Record<string, unknown>)
    this.outputRecord(hostLines(host), host as unknown as Record<string, unknown>)
  }
}
