/**
 * `rack|row|room list` and `show NAME`: the racks, rows and rooms as listings of their own,
 * each with its row and room, its hosts, its aggregate uuid and its capacity and usage.
 */
import {Args, Flags} from '@oclif/core'
import type {TopologyLevel} from '../../core/state/state.js'
import {PlacematCommand, type Column} from '../placemat-command.js'
import {notFoundError, usageError} from '../failure.js'
import {NEEDS_LAYOUT} from './edit.js'
import {nodesAt, usedOf, viewClasses, type NodeEntry} from './view-rows.js'

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
