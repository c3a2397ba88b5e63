/**
 * The rack, row and room commands, made per level: `list` and `show NAME` read the racks, rows
 * and rooms as listings of their own (each with its row and room, its hosts, its aggregate uuid
 * and its capacity and usage); the others are each one edit of the layout document, made by
 * read-modify-write (backend editLayout) and printed as the plan of what changed.
 */
import {Args, Flags} from '@oclif/core'
import {PlacementError} from '../core/errors.js'
import type {TopologyLevel} from '../core/state.js'
import type {Layout} from '../core/topology.js'
import {Failure, notFoundError, usageError, withContext} from './failure.js'
import {ALLOW_HINT, allowViolationsFlag, isGroupViolation, refusedForGroups} from './groups/flags.js'
import {SENTENCES} from './output.js'
import {PlacematCommand, type Column} from './placemat-command.js'
import {NEEDS_LAYOUT} from './topology/edit.js'
import {layoutAnswer, planLines, planSize, planSummary} from './topology/plan-text.js'
import {nodesAt, usedOf, viewClasses, type NodeEntry} from './topology/view-rows.js'

export const editFlags = {
  'dry-run': Flags.boolean({description: 'print what would change and change nothing'}),
  ...allowViolationsFlag,
  layout: Flags.string({
    description: 'plain OpenStack Placement only: the layout file that records the names (read, edited and written back)',
    helpGroup: 'CONNECTION',
  }),
}

export const PLAIN_NOTE = `On a plain OpenStack Placement endpoint (no /placemat/v1) the racks, rows
and rooms are aggregates only: Placement cannot store their names, so pass
the layout file with --layout FILE; it is read, edited, applied (each
host's aggregates set with its generation) and written back.`

export abstract class TopologyEditCommand extends PlacematCommand {
  static printed = SENTENCES

  /** Runs one edit and prints the plan it made. */
  protected async edit(
    flags: {'dry-run'?: boolean; layout?: string; 'allow-violations'?: boolean},
    fn: (doc: Layout) => void,
  ): Promise<void> {
    const dryRun = Boolean(flags['dry-run'])
    // An edit of the document refused (no such rack, one that exists) is said as it is, not as an HTTP answer.
    const edit = (doc: Layout) => {
      try {
        fn(doc)
      } catch (err) {
        if (err instanceof PlacementError)
          throw new Failure(err.status === 404 ? 'not_found' : err.status === 409 ? 'conflict' : 'bad_request', err.detail)
        throw err
      }
    }
    const backend = await this.backend()
    const res = await refusedForGroups(() =>
      backend.editLayout(edit, {dryRun, files: {layout: flags.layout}, allowViolations: flags['allow-violations']}),
    )
    this.endPlan({
      answer: () => layoutAnswer(res, dryRun),
      dryRun,
      changes: planSize(res.plan) > 0,
      // A dry run exits as the edit would, after the plan: with the error the edit would end with.
      refusal: res.refusal && (isGroupViolation(res.refusal) ? withContext(res.refusal, '', ALLOW_HINT) : res.refusal),
      text: () => {
        const lines = planLines(res.plan, res.layout)
        this.log(planSummary(res.plan).replace(/^Plan: /, dryRun ? 'Plan: ' : 'Changed: '))
        if (lines.length) this.log(lines.join('\n'))
      },
    })
  }
}

export const layoutFlag = {
  layout: Flags.string({description: 'plain OpenStack Placement only: the layout file that names the racks, rows and rooms'}),
}

/** The base of the list and show commands of one level. */
export abstract class TopologyNodeCommand extends PlacematCommand {
  protected async nodes(level: TopologyLevel, layout?: string): Promise<{nodes: NodeEntry[]; classes: string[]}> {
    const backend = await this.backend()
    const view = await backend.topologyView({layout})
    if (!view) throw usageError(NEEDS_LAYOUT)
    return {nodes: nodesAt(view.topology, level), classes: viewClasses(view.topology)}
  }

  protected async list(level: TopologyLevel, layout?: string): Promise<void> {
    const {nodes, classes} = await this.nodes(level, layout)
    const columns: Column<NodeEntry>[] = [
      {key: 'name'},
      ...(level === 'rack' ? [{key: 'row'}] : []),
      ...(level !== 'room' ? [{key: 'room'}] : []),
      {key: 'hosts', get: (n) => n.hosts.length, align: 'right'},
      ...classes.map((rc): Column<NodeEntry> => ({key: rc, get: (n) => usedOf(n, rc), align: 'right'})),
      {key: 'uuid'},
    ]
    this.output({[`${level}s`]: nodes}, nodes, columns)
  }

  protected async show(level: TopologyLevel, name: string, layout?: string): Promise<void> {
    const {nodes, classes} = await this.nodes(level, layout)
    const n = nodes.find((x) => x.name === name)
    if (!n) throw notFoundError(`no ${level} named ${name}`)
    if (!this.textOutput) return this.outputRecord({...n})
    const record: Record<string, unknown> = {name: n.name, uuid: n.uuid}
    if (level === 'rack') record.row = n.row
    if (level !== 'room') record.room = n.room
    record.hosts = n.hosts.join(',')
    // Hosts out of service, by name (the hosts line stays a plain list for scripts).
    if (n.disabled_hosts.length) record.disabled = n.disabled_hosts.join(',')
    for (const rc of classes) if (usedOf(n, rc)) record[rc] = usedOf(n, rc)
    this.outputRecord(record)
  }
}

export const nameArg = (level: TopologyLevel) => ({name: Args.string({required: true, description: `${level} name`})})

/** `LEVEL list`: one command class per level, made here (the three differ only in their level). */
export function listCommandFor(level: TopologyLevel) {
  return class extends TopologyNodeCommand {
    static summary = `List the ${level}s: where each stands, its hosts, capacity and usage, its aggregate uuid.`
    static description = `One line per ${level} (used/capacity per resource class of its hosts' whole trees).
On a plain OpenStack Placement endpoint the names come from the layout file (--layout FILE).`
    static examples = [`<%= config.bin %> ${level} list`, `<%= config.bin %> ${level} list -f value -c name,uuid`]
    static flags = {...layoutFlag}

    async run(): Promise<void> {
      const {flags} = await this.parse(this.ctor as any)
      await this.list(level, (flags as {layout?: string}).layout)
    }
  }
}

/** `LEVEL show NAME`, likewise. */
export function showCommandFor(level: TopologyLevel) {
  return class extends TopologyNodeCommand {
    static summary = `Show one ${level}: its uuid, where it stands, its hosts, capacity and usage.`
    static description = `Exit 3 if there is no such ${level}. On a plain OpenStack Placement endpoint the names come
from the layout file (--layout FILE).`
    static examples = [`<%= config.bin %> ${level} show NAME`, `<%= config.bin %> ${level} show NAME -f value -c uuid`]
    static args = nameArg(level)
    static flags = {...layoutFlag}

    async run(): Promise<void> {
      const {args, flags} = await this.parse(this.ctor as any)
      await this.show(level, (args as {name: string}).name, (flags as {layout?: string}).layout)
    }
  }
}
