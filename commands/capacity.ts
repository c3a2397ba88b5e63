import {Flags} from '@oclif/core'
import {PlacematCommand} from '../src/cli/placemat-command.js'
import {readFlavorFile} from '../src/cli/capacity/flavor-file.js'
import {
  addedHosts,
  capacity,
  catalogCapacity,
  catalogLosses,
  catalogMix,
  chosenFlavors,
  losses,
  mix,
  parseRatios,
  parseWithout,
} from '../src/cli/services/capacity.js'
import type {LostDomain} from '../src/core/headroom/what-if.js'
import {readApplyFile} from '../src/cli/apply/apply-file.js'
import {groupFileFlags} from '../src/cli/groups/flags.js'
import {groupsOf} from '../src/cli/groups/groups.js'
import {LOSS_COLUMNS, MIX_COLUMNS, amountText, bindingWord, lossTable, mixTable, summaryTable} from '../src/cli/capacity/summary.js'
import {HEADROOM_LEVELS, type DomainHeadroom, type HeadroomLevel} from '../src/core/headroom/headroom.js'

export default class Capacity extends PlacematCommand {
  static summary =
    'How many more of each flavor fit, per host, rack, row, room and the cloud; what is lost to host boundaries, stranded, or can never fit.'

  static description =
    `--flavors FILE (or, on a daemon started with --flavors, its catalog): what \`openstack flavor list --long -f json\` or
\`openstack flavor show -f json\` prints, or a YAML list of the same fields
(name, vcpus, ram, disk, ephemeral, swap, properties, member_of). Each flavor
is asked as Nova asks Placement: VCPU (PCPU with hw:cpu_policy=dedicated),
MEMORY_MB, and DISK_GB = disk + ephemeral + swap rounded up to GB, each unless
a resources:CLASS=N extra spec sets it (0 drops it); resourcesN:/traitN:
granular groups, trait:X=required|forbidden, group_policy. Extra specs not
modelled are named on stderr.

FIT: how many more instances, one flavor at a time (--mix for several), as
claims in a row would take them: the first candidate each time, with capacity
int((total - reserved) * allocation_ratio), min_unit, max_unit, step_size,
traits and sharing providers (a host's own inventory first where its
candidates put it first; a pool shared by a domain's hosts). Disabled hosts
count 0; what they would hold is DISABLED. POOLED: the fit if the domain were
one host; LOSS = POOLED - FIT, lost to host boundaries. BINDING: what stops
one more (a class, or CLASS@pool). The table is a summary by default (the
cloud and rooms unless --level, a column per flavor: the fit and what binds);
--long, -c, --sort-column or -f value|csv give a row per domain and flavor.
--group NAME: FIT counts more members of that placement group, as many as
its rule still allows (anti-affinity: the domains of its level with no
member; max-per N: N less the members in each; affinity: the members'
domain; spread: what keeps the skew); POOLED and LOSS stay the flavor's.

JSON/YAML (every level unless --level): {domains: [{level, name, flavor, fit,
pooled, fragmentation_loss, disabled_fit, binding}], stranded: [{host, class,
amount, bottleneck}] (free capacity on enabled hosts where no flavor fits, and
the class that blocks), lint: [{flavor, problem}] (flavors that fit nowhere even
on an empty cloud, or only on disabled hosts), warnings}; with --without,
--ratio or --add also what_if: {without, ratios, added, displaced: [{consumer,
from, to, why}], survives, changes: [{level, name, flavor, before, after,
change}]}. --mix: {mix, domains: [{level, name, fit, by_flavor}]}.
--without-each: {without_each, losses: [{level, name, hosts, displaced,
unplaced, survives, fit}], worst, survives}. --add FILE:
hosts of a shape in the apply format (providers:), put in existing racks by
its racks: part (racks: [{name: rack-a1, hosts: [new-01]}]). The change is made on a copy,
never on the cloud; each consumer the lost hosts held is placed again as a
claim would (largest first, disabled hosts avoided, its placement groups' hard
rules kept) or named with why it cannot be, and the counts are those after.
Exit 0 either way: scripts read survives. Worked out from one read of the cloud: a placemat daemon, a
--db file, or a plain Placement.`

  static examples = [
    'openstack flavor list --long -f json > flavors.json && <%= config.bin %> capacity --flavors flavors.json',
    '<%= config.bin %> capacity --flavors flavors.yaml --flavor m1.large --level rack',
    '<%= config.bin %> capacity --flavors flavors.yaml --json',
    '<%= config.bin %> capacity --flavors flavors.yaml --without-each rack',
    '<%= config.bin %> capacity --flavors flavors.yaml --mix m1.large=60,m1.medium=30,r1.large=10',
  ]

  static flags = {
    flavors: Flags.string({
      description: "flavor file (osc JSON or YAML; - for stdin); without it, the daemon's catalog (daemon start --flavors)",
    }),
    flavor: Flags.string({description: 'only this flavor (repeatable)', multiple: true}),
    level: Flags.string({description: 'only this level (repeatable)', multiple: true, options: [...HEADROOM_LEVELS]}),
    without: Flags.string({
      description: 'what if this were lost: host:NAME, rack:NAME, row:NAME or room:NAME (repeatable)',
      multiple: true,
    }),
    ratio: Flags.string({description: 'what if every inventory of CLASS had allocation ratio R: CLASS=R (repeatable)', multiple: true}),
    add: Flags.string({
      description: "what if these hosts were added: an apply file's providers, in the existing racks its racks: part names",
    }),
    group: Flags.string({description: 'count members of this placement group: FIT is what its rule still allows'}),
    'without-each': Flags.string({
      description:
        'N+1: every host, rack, row or room lost in turn, its consumers placed again; survives, displaced, unplaced and what the cloud then holds of each flavor, with the worst',
      options: ['host', 'rack', 'row', 'room'],
      exclusive: ['level', 'group', 'long'],
    }),
    mix: Flags.string({
      description:
        'how many instances of a flavor mix fit per domain, in these proportions, placed as claims in a row would: NAME=WEIGHT,... (m1.large=60,m1.medium=30)',
      exclusive: ['without-each', 'group', 'long', 'flavor'],
    }),
    long: Flags.boolean({
      description:
        'a row per domain and flavor (fit, pooled, loss, disabled, what binds) instead of the summary; every level unless --level',
    }),
    ...groupFileFlags,
  }

  static columns = [
    {key: 'level'},
    {key: 'name'},
    {key: 'flavor'},
    {key: 'fit', align: 'right' as const},
    {key: 'pooled', align: 'right' as const},
    {key: 'fragmentation_loss', header: 'loss', align: 'right' as const},
    {key: 'disabled_fit', header: 'disabled', align: 'right' as const},
    {key: 'binding'},
  ]

  /** A what-if's rows: each domain's fit beside what it was before and the change. */
  static whatIfColumns = [
    ...Capacity.columns.slice(0, 3),
    {key: 'before', align: 'right' as const},
    {key: 'fit', header: 'after', align: 'right' as const},
    {key: 'change', align: 'right' as const},
    ...Capacity.columns.slice(4),
  ]

  static printed = (flags: Record<string, unknown>) => ({
    columns: flags['without-each']
      ? LOSS_COLUMNS
      : flags.mix
        ? MIX_COLUMNS
        : flags.without || flags.ratio || flags.add
          ? Capacity.whatIfColumns
          : Capacity.columns,
  })

  async run(): Promise<void> {
    const {flags} = await this.parse(Capacity)
    const change = {
      without: parseWithout(flags.without),
      ratios: parseRatios(flags.ratio),
      add: flags.add ? addedHosts(await readApplyFile(flags.add), flags.add) : undefined,
    }
    // The summary (a table, no columns picked): the cloud and its rooms unless --level says.
    const summary = this.format === 'table' && !flags.long && !this.base.columns && !this.base['sort-column']?.length
    const levels = (flags.level as HeadroomLevel[] | undefined) ?? (summary ? ['room', 'cloud'] : undefined)
    const backend = await this.backend()
    const each = flags['without-each'] as LostDomain['level'] | undefined
    if (each) {
      const answer = flags.flavors
        ? await losses(backend, chosenFlavors(readFlavorFile(flags.flavors), flags.flavor), each, change, flags.layout)
        : await catalogLosses(backend, {names: flags.flavor, level: each, change})
      for (const w of answer.warnings) process.stderr.write(`warning: flavor ${w.flavor}: ${w.warning}\n`)
      const {rows, columns} = lossTable(answer)
      this.output(answer, rows, columns)
      if (this.format === 'table' && !this.base.columns)
        this.log(
          `\nwithout each ${each}: ${answer.survives ? 'every consumer placed again every time' : 'NOT every consumer can be placed again every time'}; each flavor's column is what the cloud then holds`,
        )
      return
    }
    if (flags.mix) {
      const answer = flags.flavors
        ? await mix(backend, chosenFlavors(readFlavorFile(flags.flavors)), flags.mix, {levels, change, layout: flags.layout})
        : await catalogMix(backend, {spec: flags.mix, levels, change})
      for (const w of answer.warnings) process.stderr.write(`warning: flavor ${w.flavor}: ${w.warning}\n`)
      const {rows, columns} = mixTable(answer)
      this.output(answer, rows, columns)
      if (this.format === 'table' && !this.base.columns)
        this.log(
          `\nthe mix ${answer.mix.map((m) => `${m.flavor}=${m.weight}`).join(',')}, claimed in its proportions until one of it fits nowhere`,
        )
      return
    }
    const group = flags.group === undefined ? undefined : await (await groupsOf(backend, flags)).show(flags.group)
    const answer = flags.flavors
      ? await capacity(backend, chosenFlavors(readFlavorFile(flags.flavors), flags.flavor), {levels, change, group, layout: flags.layout})
      : await catalogCapacity(backend, {names: flags.flavor, levels, change, group})
    for (const w of answer.warnings) process.stderr.write(`warning: flavor ${w.flavor}: ${w.warning}\n`)
    if (this.textOutput) for (const l of answer.lint) process.stderr.write(`lint: flavor ${l.flavor}: ${l.problem}\n`)
    if (summary) {
      const {rows, columns} = summaryTable(answer.domains, answer.what_if?.changes)
      this.output(answer, rows, columns)
      this.log(
        "\neach cell: how many more fit, and what binds (ram, vcpu, disk: the hosts' own; disk@POOL: a shared pool's); --long for every number",
      )
    } else if (answer.what_if) {
      // Before, after and the change side by side (a domain lost: after 0).
      const changed = new Map(answer.what_if.changes.map((c) => [`${c.level}\n${c.name}\n${c.flavor}`, c]))
      const rows = answer.domains.map((d) => {
        const c = changed.get(`${d.level}\n${d.name}\n${d.flavor}`)
        return {...d, before: c?.before ?? 0, change: c?.change ?? d.fit}
      })
      this.output(answer, rows, Capacity.whatIfColumns as Array<{key: string; header?: string; align?: 'right'}>)
    } else
      this.output(
        answer,
        answer.domains,
        Capacity.columns as Array<{key: string; header?: string; align?: 'right'; get?: (d: DomainHeadroom) => unknown}>,
      )
    if (this.format === 'table' && answer.stranded.length && !this.base.columns) {
      this.log(`\nstranded (free on hosts where no flavor fits):`)
      for (const s of answer.stranded)
        this.log(`  ${s.host}: ${amountText(s.class, s.amount)} ${s.class} (blocked by ${bindingWord(s.bottleneck)})`)
    }
    const w = answer.what_if
    if (w && this.format === 'table' && !this.base.columns) {
      const what = [
        ...w.without.map((d) => `without ${d.level} ${d.name}`),
        ...Object.entries(w.ratios).map(([rc, r]) => `${rc} ratio ${r}`),
        ...(w.added.length ? [`with ${w.added.length} host(s) added`] : []),
      ]
      this.log(
        `\n${what.join(', ')}: ${w.displaced.length} consumer(s) displaced; ${w.survives ? 'every one placed again' : 'NOT every one can be placed again'}`,
      )
      for (const d of w.displaced)
        this.log(`  ${d.consumer} from ${d.from.join(',')}: ${d.to ? `to ${d.to.join(',')}` : `nowhere: ${d.why}`}`)
    }
  }
}
