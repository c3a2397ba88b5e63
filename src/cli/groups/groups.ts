/**
 * Placement groups as the command line reaches them: on placemat (a daemon or --db) the
 * groups live in the database, under /placemat/v1/groups, and every rule is checked there.
 */
import type {PlacementClient} from '../../client/client.js'
import type {GroupRecord} from '../../core/groups.js'
import {PLACEMAT_API, type Backend} from '../backend/backend.js'
import {usageError} from '../failure.js'

const GROUPS = `${PLACEMAT_API}/groups`

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

const path = (name: string) => `${GROUPS}/${encodeURIComponent(name)}`
const allow = (opts?: {allowViolations?: boolean}) => (opts?.allowViolations ? {query: {allow_violations: 'true'}} : undefined)

function placematGroups(client: PlacementClient): Groups {
  return {
    list: async () => (await client.get<{groups: GroupRecord[]}>(GROUPS)).groups,
    show: (name) => client.get<GroupRecord>(path(name)),
    create: (spec, opts) => client.post<GroupRecord>(GROUPS, spec, allow(opts)),
    delete: async (name) => {
      await client.delete(path(name))
    },
    members: (name, change, opts) => client.post<GroupRecord>(`${path(name)}/members`, change, allow(opts)),
  }
}

/** The groups of `backend`; plain Placement has nowhere to keep them. */
export function groupsOf(backend: Backend): Groups {
  if (backend.kind !== 'placemat') {
    throw usageError('placement groups are kept by placemat (a daemon or --db): plain OpenStack Placement has no place for them')
  }
  return placematGroups(backend.client)
}
