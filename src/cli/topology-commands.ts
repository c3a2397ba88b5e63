/**
 * The rack, row and room commands, made per level: `list` and `show NAME` read the racks, rows
 * and rooms as listings of their own (each with its row and room, its hosts, its aggregate uuid
 * and its capacity and usage); the others are each one edit of the layout document, made by
 * read-modify-write (backend editLayout) and printed as the plan of what changed.
 */
import {Args, Flags} from '@oclif/core'
import {PlacementError} from '../core/errors.js'
import type {TopologyLevel} from '../core/state/state.js'
import {edits} from '../core/layout-edits.js'
import type {Layout} from '../core/topology.js'
import {Failure, notFoundError, usageError, withContext} from './failure.js'
import {ALLOW_HINT, allowViolationsFlag, isGroupViolation, refusedForGroups} from './groups/flags.js'
import {SENTENCES} from './output.js'
import {PlacematCommand, type Column} from './placemat-command.js'
import {hostNames, NEEDS_LAYOUT} from './topology/edit.js'
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

/** What a level holds (its add and remove take them, its create a comma list of them) and what holds it. */
const PARTS = {
  rack: {member: 'host', members: 'hosts', parent: 'row'},
  row: {member: 'rack', members: 'racks', parent: 'room'},
  room: {member: 'row', members: 'rows', parent: undefined},
} as const

/** Each level's edits of the layout, as the commands call them: `members` already names as the layout keeps them. */
const LEVEL_EDITS = {
  rack: {
    create: (doc: Layout, name: string, members: string[], parent?: string) => edits.rackCreate(doc, name, {hosts: members, row: parent}),
    add: edits.rackAdd,
    remove: edits.rackRemove,
    delete: edits.rackDelete,
  },
  row: {
    create: (doc: Layout, name: string, members: string[], parent?: string) => edits.rowCreate(doc, name, {racks: members, room: parent}),
    add: edits.rowAdd,
    remove: edits.rowRemove,
    delete: edits.rowDelete,
  },
  room: {
    create: (doc: Layout, name: string, members: string[]) => edits.roomCreate(doc, name, {rows: members}),
    add: edits.roomAdd,
    remove: edits.roomRemove,
    delete: edits.roomDelete,
  },
}

type EditVerb = 'create' | 'add' | 'remove' | 'delete'

/** What each level's edit commands say (the PLAIN_NOTE follows every description). */
const EDIT_HELP: Record<TopologyLevel, Record<EditVerb, {summary: string; description: string; examples: string[]}>> = {
  rack: {
    create: {
      summary: 'Create a rack (an aggregate), optionally with hosts and in a row.',
      description: `The rack's hosts become members of its aggregate (and of its row's and
room's, with --row). A host is in one rack: a host already in another rack
is moved. Exit 4 if the rack exists, 3 if the row or a host does not.`,
      examples: [
        '<%= config.bin %> rack create rack-1a-01 --hosts cn-0001,cn-0002 --row row-1a',
        '<%= config.bin %> rack create rack-spare',
      ],
    },
    add: {
      summary: 'Put hosts in a rack (a host in another rack is moved).',
      description: `Each host joins the rack's aggregate and its row's and room's, and leaves
the aggregates of the rack (row, room) it was in; its other aggregates are
kept. Hosts already in the rack are left as they are.`,
      examples: ['<%= config.bin %> rack add rack-1a-01 cn-0009 cn-0010'],
    },
    remove: {
      summary: 'Take hosts out of a rack (they leave the topology).',
      description: `Each host leaves the rack's, row's and room's aggregates; its other
aggregates are kept. Exit 3 (and nothing changed) if a host is not in the rack.`,
      examples: ['<%= config.bin %> rack remove rack-1a-01 cn-0002'],
    },
    delete: {
      summary: 'Delete a rack; its hosts leave the topology.',
      description: `The rack's hosts leave its aggregate and its row's and room's (their other
aggregates are kept). Exit 3 if there is no such rack.`,
      examples: ['<%= config.bin %> rack delete rack-1a-01'],
    },
  },
  row: {
    create: {
      summary: "Create a row of racks: every host of those racks joins the row's aggregate.",
      description: `The racks move into the new row (a rack is in one row: one in another row
leaves it), so all their hosts become members of the row's aggregate (and
of the room's, with --room). Exit 4 if the row exists, 3 if the room or a
rack does not.`,
      examples: ['<%= config.bin %> row create row-1a --racks rack-1a-01,rack-1a-02 --room room-1'],
    },
    add: {
      summary: 'Put racks in a row; this is how a rack moves between rows.',
      description: `A rack is in one row: a rack in another row is moved, and its hosts' row
and room aggregates follow (they leave the old row's and room's and join the
new ones'; their rack aggregate and other aggregates are kept).`,
      examples: ['<%= config.bin %> row add row-1b rack-1a-04'],
    },
    remove: {
      summary: 'Take racks out of a row (they stand alone, hosts and all).',
      description: `The racks' hosts leave the row's and room's aggregates and stay in their
rack's. Exit 3 (and nothing changed) if a rack is not in the row.`,
      examples: ['<%= config.bin %> row remove row-1a rack-1a-04'],
    },
    delete: {
      summary: 'Delete a row; its racks stay, standing alone.',
      description: `The row's hosts leave its aggregate and its room's; the racks are kept
(delete them with \`rack delete\`). Exit 3 if there is no such row.`,
      examples: ['<%= config.bin %> row delete row-1a'],
    },
  },
  room: {
    create: {
      summary: "Create a room of rows: every host of those rows joins the room's aggregate.",
      description: `The rows move into the new room (a row is in one room: one in another
room leaves it). Exit 4 if the room exists, 3 if a row does not.`,
      examples: ['<%= config.bin %> room create room-1 --rows row-1a,row-1b'],
    },
    add: {
      summary: 'Put rows in a room (a row in another room is moved).',
      description: `The rows' hosts leave the old room's aggregate and join this one's; their
rack and row aggregates and other aggregates are kept.`,
      examples: ['<%= config.bin %> room add room-2 row-1c'],
    },
    remove: {
      summary: 'Take rows out of a room (they stand alone, racks and hosts and all).',
      description: `The rows' hosts leave the room's aggregate. Exit 3 (and nothing changed)
if a row is not in the room.`,
      examples: ['<%= config.bin %> room remove room-1 row-1c'],
    },
    delete: {
      summary: 'Delete a room; its rows stay, standing alone.',
      description: `The room's hosts leave its aggregate; the rows and racks are kept. Exit 3
if there is no such room.`,
      examples: ['<%= config.bin %> room delete room-1'],
    },
  },
}

/** A command's own help for one level's edit. */
const editHelp = (level: TopologyLevel, verb: EditVerb) => {
  const help = EDIT_HELP[level][verb]
  return {summary: help.summary, description: `${help.description}\n\n${PLAIN_NOTE}`, examples: help.examples}
}

type EditFlags = {'dry-run'?: boolean; layout?: string; 'allow-violations'?: boolean}

/** The members an operator named as the layout keeps them: hosts by their names (unknown ones exit 3), racks and rows as given. */
async function memberNames(command: PlacematCommand, level: TopologyLevel, refs: string[]): Promise<string[]> {
  return level === 'rack' ? hostNames(await command.client(), refs) : refs
}

/** `LEVEL create NAME`: a new rack, row or room, with its members (a comma list) and, but a room, where it stands. */
export function createCommandFor(level: TopologyLevel) {
  const {members, parent} = PARTS[level]
  return class extends TopologyEditCommand {
    static summary = editHelp(level, 'create').summary
    static description = editHelp(level, 'create').description
    static examples = editHelp(level, 'create').examples
    static args = nameArg(level)
    static flags = {
      [members]: Flags.string({
        description: level === 'rack' ? 'comma separated hosts (root providers, by name or uuid)' : `comma separated ${members}`,
      }),
      ...(parent ? {[parent]: Flags.string({description: `the ${parent} the ${level} is in (default: it stands alone)`})} : {}),
      ...editFlags,
    }

    async run(): Promise<void> {
      const {args, flags} = await this.parse(this.ctor as any)
      const given = flags as EditFlags & Record<string, string | undefined>
      const refs =
        given[members]
          ?.split(',')
          .map((m) => m.trim())
          .filter(Boolean) ?? []
      const names = refs.length ? await memberNames(this, level, refs) : []
      const where = parent ? given[parent] : undefined
      await this.edit(given, (doc) => LEVEL_EDITS[level].create(doc, (args as {name: string}).name, names, where))
    }
  }
}

/** `LEVEL add|remove NAME MEMBER...`: members put in a rack, row or room, or taken out. */
function membersCommandFor(level: TopologyLevel, verb: 'add' | 'remove') {
  const {member} = PARTS[level]
  return class extends TopologyEditCommand {
    static summary = editHelp(level, verb).summary
    static description = editHelp(level, verb).description
    static examples = editHelp(level, verb).examples
    static strict = false
    static args = {
      ...nameArg(level),
      [member]: Args.string({
        required: true,
        description: `${level === 'rack' ? 'host (root provider) name or uuid' : `${member} name`}; several may be given`,
      }),
    }
    static flags = {...editFlags}

    async run(): Promise<void> {
      const {argv, flags} = await this.parse(this.ctor as any)
      const [name, ...refs] = argv as string[]
      const names = await memberNames(this, level, refs)
      await this.edit(flags as EditFlags, (doc) => LEVEL_EDITS[level][verb](doc, name, names))
    }
  }
}

export const addCommandFor = (level: TopologyLevel) => membersCommandFor(level, 'add')
export const removeCommandFor = (level: TopologyLevel) => membersCommandFor(level, 'remove')

/** `LEVEL delete NAME`. */
export function deleteCommandFor(level: TopologyLevel) {
  return class extends TopologyEditCommand {
    static summary = editHelp(level, 'delete').summary
    static description = editHelp(level, 'delete').description
    static examples = editHelp(level, 'delete').examples
    static args = nameArg(level)
    static flags = {...editFlags}

    async run(): Promise<void> {
      const {args, flags} = await this.parse(this.ctor as any)
      await this.edit(flags as EditFlags, (doc) => LEVEL_EDITS[level].delete(doc, (args as {name: string}).name))
    }
  }
}
