import {Args, Flags} from '@oclif/core'
import {PlacematCommand} from '../../src/cli/placemat-command.js'
import {SENTENCES} from '../../src/cli/output.js'
import {postAllocations, readPostFile} from '../../src/cli/services/allocations.js'

export default class AllocationPost extends PlacematCommand {
  static summary = 'Write the allocations of many consumers at once, all or nothing (POST /allocations).'
  static printed = SENTENCES
  static description =
    'FILE (YAML or JSON; "-" reads stdin) holds the POST /allocations body: a mapping of consumer uuid to ' +
    '{allocations: {PROVIDER: {resources: {CLASS: N}}}, project_id, user_id, consumer_generation, consumer_type}. ' +
    'An empty allocations mapping releases a consumer (e.g. a migration moving its allocations to an instance).\n\n' +
    'For you: PROVIDER may be a name; a consumer without consumer_generation gets its current one (and a ' +
    'concurrent update is then retried); project_id, user_id and consumer_type default to --project, --user, ' +
    "--consumer-type, then to the consumer's current ones.\n\n" +
    'Prints the consumers written (JSON/YAML: {"consumers": [uuid...]}).'

  static examples = [
    '<%= config.bin %> allocation post allocations.yaml',
    'cat moves.json | <%= config.bin %> allocation post - --json',
    `# allocations.yaml:
# 9a1f2b0c-6c3e-4f1e-8b7e-2d4c6a8e0f13:
#   allocations:
#     compute-1: {resources: {VCPU: 2, MEMORY_MB: 4096}}
#   project_id: p1
#   user_id: u1
#   consumer_type: INSTANCE`,
  ]

  static args = {file: Args.string({description: 'YAML or JSON file, or - for stdin', required: true})}
  static flags = {
    project: Flags.string({description: 'project id for consumers that give none (default: the current one)'}),
    user: Flags.string({description: 'user id for consumers that give none (default: the current one)'}),
    'consumer-type': Flags.string({description: 'consumer type for consumers that give none (default: the current one)'}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(AllocationPost)
    const entries = readPostFile(args.file)
    await postAllocations(await this.client(), entries, {project: flags.project, user: flags.user, consumerType: flags['consumer-type']})
    const consumers = Object.keys(entries)
    if (!this.textOutput) return this.outputRecord({consumers})
    this.log(`allocations written for ${consumers.length} consumer${consumers.length === 1 ? '' : 's'}`)
  }
}
