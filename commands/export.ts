import fs from 'node:fs'
import {Flags} from '@oclif/core'
import {PlacematCommand} from '../src/cli/placemat-command.js'
import {DOCUMENT} from '../src/cli/output.js'
import {exportApplyFile, exportSnapshotText, exportToPlacement} from '../src/cli/services/export.js'

const warn = (message: string) => process.stderr.write(`placemat: warning: ${message}\n`)

export default class Export extends PlacematCommand {
  static summary = 'Print the whole state as a snapshot (YAML; JSON with --json) that `placemat import` loads, or as an apply file.'

  static description = `Reads everything through the public Placement API, so it works on any endpoint (a placemat
daemon, --db FILE, or a real OpenStack Placement): custom resource classes and traits, every
provider (uuid, name, generation, parent, inventories, traits, aggregates), and every consumer that
holds allocations (uuid, project, user, consumer type, generation, allocations), each listed
through GET /resource_providers/{uuid}/allocations and read with GET /allocations/{consumer}.
On placemat (a daemon or --db) also what only placemat keeps, through /placemat/v1: the racks,
rows and rooms (names, parents, the topology generation), the placement groups (rule,
members, generation, times), what consumers moved away with claim move were, why hosts are
disabled and the names apply files gave aggregates; such a snapshot is version 2. Plain
OpenStack Placement keeps none of these, and the export says so on stderr.

The output is in a fixed order (providers parents first, by uuid; consumers by uuid; sorted keys
and lists, but a provider's inventories in its own order), so export -> import -> export gives the same text. The reads are not one transaction:
when a provider generation moved while reading, the whole read is made again (up to 5 times),
and when no pass was quiet the export fails (exit 4) rather than mix states: stop the writers,
or read a running Placement's database in one transaction with \`placemat import --from-placement\`.
Not carried: created/updated times, and consumers without allocations (the API does not show them).`

  static examples = [
    '<%= config.bin %> export --db placement.db > snap.yaml',
    '<%= config.bin %> export --url http://placement:8778 --token $OS_TOKEN > snap.yaml',
    '<%= config.bin %> export --json -o snap.json',
    '<%= config.bin %> export --format apply > cloud.yaml  # the declarative file, following the cloud',
    '<%= config.bin %> export --db placemat.db --to-placement mysql+pymysql://placement:SECRET@db/placement  # the way back',
  ]

  /** A snapshot or an apply file in every format: -c, --ids, --sort-column and --no-headers have nothing to act on. */
  static printed = DOCUMENT

  static flags = {
    output: Flags.string({char: 'o', description: 'write to this file instead of stdout (a name ending in .json: JSON, unless --yaml)'}),
    'to-placement': Flags.string({
      description:
        'write the cloud into an empty OpenStack Placement database instead (its URL as placement.conf names it; schema made by `placement-manage db sync`), generations included: the way back (racks, rows, rooms, placement groups, moved consumers, aggregate names and why hosts are disabled are left out, said on stderr)',
    }),
    format: Flags.string({
      char: 'f',
      description:
        'snapshot (default; YAML, JSON with --json), or apply: the cloud as a file for `placemat apply` (applying it plans nothing)',
      options: ['snapshot', 'apply', 'json', 'yaml'],
    }),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Export)
    // -o FILE.json writes JSON (import reads a *.json file as JSON), unless --yaml says otherwise.
    const json = this.base.json || (!this.base.yaml && /\.json$/i.test(flags.output ?? ''))
    const backend = await this.backend()
    if (flags.format === 'apply') return this.write(flags.output, await exportApplyFile(backend, json))
    if (flags['to-placement']) {
      const {written: r, shown} = await exportToPlacement(backend, flags['to-placement'], warn)
      if (this.base.json) this.log(JSON.stringify(r, null, 2))
      else
        this.log(
          `wrote into ${shown}: ${r.providers} providers, ${r.consumers} consumers, ${r.allocations} allocations (Placement schema: ${r.placement_schema})`,
        )
      return
    }
    // A read one by one (plain Placement: five calls a provider) shows how far it is, on a terminal only.
    const tty = Boolean(process.stderr.isTTY)
    const startProgress = tty ? (await import('../src/cli/components/Progress.js')).startProgress : undefined
    let bar: ReturnType<NonNullable<typeof startProgress>> | undefined
    const reading = exportSnapshotText(backend, {
      json,
      progress: startProgress
        ? (done, total, what) => {
            bar ??= startProgress(process.stderr)
            bar.update(done, total, `reading ${what}`)
          }
        : undefined,
      warn,
    })
    const snap = await reading.finally(() => bar?.stop())
    this.write(flags.output, snap.text)
    // Said where a person reads it: with -o, or on a terminal (a document on stdout stays the document alone).
    if (flags.output || process.stderr.isTTY)
      process.stderr.write(`wrote ${snap.providers} providers, ${snap.consumers} consumers to ${flags.output ?? 'stdout'}\n`)
  }

  private write(file: string | undefined, text: string): void {
    if (file) fs.writeFileSync(file, text)
    else process.stdout.write(text)
  }
}
