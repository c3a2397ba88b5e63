import {Args, Flags} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {SENTENCES} from '../../src/cli/output.js'
import {setHostStatus} from '../../src/cli/services/hosts.js'

export default class HostDisable extends PlacematCommand {
  static summary = 'Take a host out of service: nothing new is placed on it (COMPUTE_STATUS_DISABLED).'
  static printed = SENTENCES
  static description = `Sets COMPUTE_STATUS_DISABLED on the host's root provider, the trait nova sets
when a compute service is disabled: nova's scheduler, and placemat's
candidates and claims, leave the host out. What it holds stays (placemat
drain HOST moves it away). On placemat (a daemon or --db) the trait and
--reason are one write, and the reason is kept with the host (host show);
disabling again without --reason keeps the reason there is. On plain
Placement only the trait is set (PUT .../traits with the provider's
generation, read again and retried on 409); the reason cannot be kept there.`

  static examples = [
    "<%= config.bin %> host disable cn-0001 --reason 'PSU failure, ticket 4711'",
    '<%= config.bin %> host disable cn-0001 && placemat drain cn-0001',
  ]

  static args = {host: Args.string({description: 'host (root provider) name or uuid', required: true})}
  static flags = {reason: Flags.string({description: 'why (kept by placemat, shown by host show; at most 255 characters)'})}

  async run(): Promise<void> {
    const {args, flags} = await this.parse(HostDisable)
    const backend = await this.backend()
    const out = await setHostStatus(backend, args.host, true, flags.reason)
    if (out.reasonDropped)
      process.stderr.write('placemat: warning: plain Placement has nowhere to keep a reason: only COMPUTE_STATUS_DISABLED was set\n')
    if (!this.textOutput) return this.outputRecord({...out.host, changed: out.changed})
    const why = out.host.disabled_reason ? `: ${out.host.disabled_reason}` : ''
    this.log(out.changed ? `Host ${out.host.name} disabled${why}` : `Host ${out.host.name} was already disabled${why}`)
  }
}
