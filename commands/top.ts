import {Flags} from '@oclif/core'
import {PlacematCommand} from '../src/cli/placemat-command.js'
import {SENTENCES} from '../src/cli/output.js'
import {TopModel} from '../src/cli/services/top.js'
import {readFlavorFile} from '../src/cli/capacity/flavor-file.js'
import {chosenFlavors} from '../src/cli/services/capacity.js'
import {renderFrameText} from '../src/cli/render/top-frame.js'

export default class Top extends PlacematCommand {
  static summary = 'A live view of capacity and usage: per resource class, fullest providers, recent claims.'

  static description = `Shows, refreshed every --interval seconds: capacity and usage per
resource class (as bars), the fullest providers (each with its fullest
class), and recent claims: consumers whose allocations appeared (new),
changed or went away (removed) between frames. The first frame lists the
most recently updated consumers (placemat endpoints only: the standard
API does not say when a consumer was written). q, Esc or Ctrl-C quits.

When stdout is not a terminal, or with --once, one frame is printed as
plain text (or JSON/YAML with --json/--yaml) and the command exits.

Each frame reads three calls on placemat; on a plain Placement endpoint,
three per provider (inventories, usages, allocations).

--flavors FILE --flavor NAME adds each rack's fit for that flavor (placemat
capacity's count), by room and row, fullest first.`

  static examples = [
    '<%= config.bin %> top',
    '<%= config.bin %> top --once',
    '<%= config.bin %> top --interval 5 --url http://placement:8778',
    '<%= config.bin %> top --flavors flavors.json --flavor m1.large',
  ]

  /** A frame of bars and lines, not a table: no columns to pick (--json or --yaml print the frame's document). */
  static printed = SENTENCES

  static flags = {
    interval: Flags.integer({description: 'seconds between refreshes', default: 2, min: 1}),
    once: Flags.boolean({description: 'print one frame and exit'}),
    limit: Flags.integer({description: 'rows of fullest providers, of recent claims and of racks', default: 10, min: 1}),
    flavors: Flags.string({description: 'flavor file (osc JSON or YAML), for --flavor', dependsOn: ['flavor']}),
    flavor: Flags.string({description: "show each rack's fit for this flavor, by row and room, fullest first", dependsOn: ['flavors']}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Top)
    const flavor = flags.flavor ? chosenFlavors(readFlavorFile(flags.flavors!), [flags.flavor])[0] : undefined
    const model = new TopModel(await this.backend(), {limit: flags.limit, flavor})
    if (flags.once || !process.stdout.isTTY || !this.textOutput) {
      const frame = await model.frame()
      if (!this.textOutput) this.outputRecord(frame as unknown as Record<string, unknown>)
      else this.log(renderFrameText(frame))
      return
    }
    const {runTop} = await import('../src/cli/components/Top.js')
    await runTop(() => model.frame(), flags.interval)
  }
}
