import {Args} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {SENTENCES} from '../../src/cli/output.js'
import {setHostStatus} from '../../src/cli/services/hosts.js'

export default class HostEnable extends PlacematCommand {
  static summary = 'Bring a host back into service: COMPUTE_STATUS_DISABLED and its reason removed.'
  static printed = SENTENCES
  static description = `Removes COMPUTE_STATUS_DISABLED from the host's root provider (and, on
placemat, the reason kept with it), so candidates and claims may place on it
again. On plain Placement: PUT .../traits with the provider's generation,
read again and retried on 409.`

  static examples = ['<%= config.bin %> host enable cn-0001']
  static args = {host: Args.string({description: 'host (root provider) name or uuid', required: true})}

  async run(): Promise<void> {
    const {args} = await this.parse(HostEnable)
    const out = await setHostStatus(await this.backend(), args.host, false)
    if (!this.textOutput) return this.outputRecord({...out.host, changed: out.changed})
    this.log(out.changed ? `Host ${out.host.name} enabled` : `Host ${out.host.name} was not disabled`)
  }
}
