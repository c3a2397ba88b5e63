/**
 * Placement groups as the command line reaches them, where the backend keeps them: on placemat
 * (a daemon or --db) in the database, every rule checked there; on plain Placement in a local
 * file (file-groups.ts).
 */
import type {Group, GroupRecord} from '../../core/groups.js'
import {GROUP_NAME_RULE, isGroupName} from '../../core/group-writes.js'
import type {Backend, LocalFiles} from '../backend/backend.js'
import {usageError} from '../failure.js'

export interface GroupSpecFlags {
  name: string
  policy: string
  level: string
  max_per?: number
  max_skew?: number
  soft?: boolean
  members?: string[]
}

export interface Groups {
  list(): Promise<GroupRecord[]>
  show(name: string): Promise<GroupRecord>
  create(spec: GroupSpecFlags, opts?: {allowViolations?: boolean}): Promise<GroupRecord>
  delete(name: string): Promise<void>
  members(name: string, change: {add?: string[]; remove?: string[]}, opts?: {allowViolations?: boolean}): Promise<GroupRecord>
}

/** Plain Placement without --groups FILE. */
export const NO_GROUPS_HERE =
  'placement groups are kept by placemat (a daemon or --db): plain OpenStack Placement has no place for them; keep them in a local file with --groups FILE (and --layout FILE for racks, rows and rooms)'

/** A new group's name, checked before anything is asked of the endpoint (exit 2). */
export function checkGroupName(name: string): void {
  if (!isGroupName(name)) throw usageError(`invalid group name '${name}': ${GROUP_NAME_RULE}`)
}

/** The groups of `backend` (on plain Placement, those of the --groups file); exit 2 where none are kept. */
export async function groupsOf(backend: Backend, files: LocalFiles = {}): Promise<Groups> {
  const groups = await backend.groups(files)
  if (!groups) throw usageError(NO_GROUPS_HERE)
  return groups
}

/** A group as it is kept in a record: placemat's answer (GroupRecord), a snapshot's (SnapshotGroup). */
export type StoredGroup = Pick<
  GroupRecord,
  'name' | 'policy' | 'level' | 'max_per' | 'max_skew' | 'soft' | 'generation' | 'members' | 'created_at' | 'updated_at'
>

/** A group as the core counts it, from its record: the one way back from `groupRecord` on the command line. */
export function groupOfRecord(r: StoredGroup): Group {
  return {
    name: r.name,
    policy: r.policy,
    level: r.level,
    ...(r.max_per !== undefined ? {maxPer: r.max_per} : {}),
    ...(r.max_skew !== undefined ? {maxSkew: r.max_skew} : {}),
    soft: r.soft,
    members: new Set(r.members),
    generation: r.generation,
    createdAt: Date.parse(r.created_at),
    updatedAt: Date.parse(r.updated_at),
  }
}
