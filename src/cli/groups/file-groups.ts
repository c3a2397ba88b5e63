/**
 * Placement groups in a local file (--groups FILE), for plain OpenStack Placement, which has
 * nowhere to keep them. The rules are the core's, judged here on a snapshot of the cloud read
 * through the standard API (the layout file, --layout, names the racks, rows and rooms). What
 * no file can give: a claim's rule is checked when its candidate is chosen, not inside the
 * write, so two claimers racing can both win; placemat checks it in the write.
 *
 *   groups:
 *     - name: db-replicas
 *       policy: anti-affinity        # affinity, anti-affinity, max-per, spread
 *       level: row                   # host, rack, row, room
 *       max_per: 2                   # max-per only
 *       max_skew: 1                  # spread only
 *       soft: false
 *       members: [UUID, ...]
 */
import fs from 'node:fs'
import YAML from 'yaml'
import {createGroup, deleteGroup, addMembers, removeMembers, requireGroup, type GroupSpec} from '../../core/group-writes.js'
import {groupRecord, type Group, type GroupLevel, type GroupPolicy} from '../../core/groups.js'
import {PlacementError} from '../../core/errors.js'
import type {State} from '../../core/state/state.js'
import {Changes} from '../../core/state/changes.js'
import {layoutNodes} from '../../core/topology.js'
import {loadState, type Backend, type LoadOptions} from '../backend/backend.js'
import {readLayoutFile, layoutBody} from '../topology/layout-file.js'
import {badRequestError, conflictError, notFoundError, usageError} from '../failure.js'
import type {GroupSpecFlags, Groups} from './groups.js'

interface GroupEntry {
  name: string
  policy: GroupPolicy
  level: GroupLevel
  max_per?: number
  max_skew?: number
  soft?: boolean
  members?: string[]
}

/** The groups a file holds ("nothing yet" when it does not exist). */
function readGroupsFile(file: string): GroupEntry[] {
  if (!fs.existsSync(file)) return []
  let data: unknown
  try {
    data = YAML.parse(fs.readFileSync(file, 'utf8'))
  } catch (err) {
    throw usageError(`${file}: not YAML or JSON (${(err as Error).message.split('\n')[0]})`)
  }
  const list = (data as {groups?: unknown} | null)?.groups ?? []
  if (!Array.isArray(list)) throw usageError(`${file}: expected "groups:" with a list of groups`)
  return list as GroupEntry[]
}

function writeGroupsFile(file: string, groups: Iterable<Group>): void {
  const entries = [...groups].map((g) => ({
    name: g.name,
    policy: g.policy,
    level: g.level,
    ...(g.maxPer !== undefined ? {max_per: g.maxPer} : {}),
    ...(g.maxSkew !== undefined ? {max_skew: g.maxSkew} : {}),
    ...(g.soft ? {soft: true} : {}),
    members: [...g.members],
  }))
  fs.writeFileSync(
    file,
    `# placemat placement groups (plain Placement: this file is where they are kept)\n${YAML.stringify({groups: entries})}`,
  )
}

/** A domain refusal as the command line says it (the same exit codes as over HTTP). */
function asFailure(err: unknown): unknown {
  if (!(err instanceof PlacementError)) return err
  if (err.status === 404) return notFoundError(err.detail)
  if (err.status === 409) return conflictError(err.detail)
  return badRequestError(err.detail)
}

/**
 * The cloud as a State with the file's groups in it (and the layout's racks, rows and rooms);
 * `consumers` are read to know where members are.
 */
export async function groupsSnapshot(
  backend: Backend,
  file: string,
  layoutFile: string | undefined,
  load: LoadOptions = {},
): Promise<State> {
  const topology = layoutFile ? [...layoutNodes(layoutBody(readLayoutFile(layoutFile))).values()] : []
  const s = await loadState(backend, {...load, consumers: true, changeable: true, topology})
  s.changes = new Changes()
  const now = Date.now()
  try {
    for (const e of readGroupsFile(file)) {
      const spec: GroupSpec = {
        name: e.name,
        policy: e.policy,
        level: e.level,
        maxPer: e.max_per,
        maxSkew: e.max_skew,
        soft: e.soft,
        members: e.members,
      }
      createGroup(s, now, spec, {allowViolations: true})
    }
  } catch (err) {
    if (err instanceof PlacementError) throw usageError(`${file}: ${err.detail}`)
    throw err
  }
  return s
}

export function fileGroups(backend: Backend, file: string, layoutFile: string | undefined): Groups {
  const snapshot = () => groupsSnapshot(backend, file, layoutFile)
  /** Runs a change on the snapshot and writes the file back. */
  const change = async <T>(fn: (s: State, now: number) => T): Promise<T> => {
    const s = await snapshot()
    let out: T
    try {
      out = fn(s, Date.now())
    } catch (err) {
      throw asFailure(err)
    }
    writeGroupsFile(
      file,
      [...s.groups.values()].sort((a, b) => a.name.localeCompare(b.name)),
    )
    return out
  }
  return {
    list: async () => {
      const s = await snapshot()
      return [...s.groups.values()].sort((a, b) => a.name.localeCompare(b.name)).map((g) => groupRecord(s, g))
    },
    show: async (name) => {
      const s = await snapshot()
      try {
        return groupRecord(s, requireGroup(s, name), {placements: true})
      } catch (err) {
        throw asFailure(err)
      }
    },
    create: (spec: GroupSpecFlags, opts) =>
      change((s, now) =>
        groupRecord(
          s,
          createGroup(
            s,
            now,
            {
              name: spec.name,
              policy: spec.policy as GroupPolicy,
              level: spec.level as GroupLevel,
              maxPer: spec.max_per,
              maxSkew: spec.max_skew,
              soft: spec.soft,
              members: spec.members,
            },
            {allowViolations: opts?.allowViolations},
          ),
        ),
      ),
    delete: (name) => change((s) => deleteGroup(s, name)),
    members: (name, ch, opts) =>
      change((s, now) => {
        let g = requireGroup(s, name)
        if (ch.remove?.length) g = removeMembers(s, now, name, ch.remove)
        if (ch.add?.length) g = addMembers(s, now, name, ch.add, {allowViolations: opts?.allowViolations})
        return groupRecord(s, g, {placements: true})
      }),
  }
}
