/**
 * member_of values as an operator writes them: an aggregate uuid, `in:A,B`, `!A` or `!in:A,B`,
 * where any aggregate may be a rack, row or room by name (rack:NAME, row:NAME, room:NAME).
 */
import type {TopologyLevel} from '../../core/state/state.js'
import {nodeUuid} from '../../core/topology.js'

const TOPO_REF = /^(rack|row|room):(.+)$/

/**
 * The value's prefix (`!in:`, `in:`, `!` or none) and its aggregates. A bare list (`A,B`) is
 * `in:A,B`, as osc-placement sends its --member-of (Placement takes no other meaning for it).
 */
function splitMemberOf(value: string): {prefix: string; items: string[]} {
  const v = value.trim()
  const given = ['!in:', 'in:', '!'].find((p) => v.startsWith(p))
  const prefix = given ?? (v.includes(',') ? 'in:' : '')
  const rest = v.slice(given?.length ?? 0)
  return {prefix, items: (prefix.endsWith('in:') ? rest.split(',') : [rest]).map((i) => i.trim())}
}

const refOf = (item: string): {level: TopologyLevel; name: string} | undefined => {
  const m = TOPO_REF.exec(item)
  return m ? {level: m[1] as TopologyLevel, name: m[2]} : undefined
}

/** One member_of value with topology names made aggregate uuids. */
export function memberOfValue(value: string): string {
  const {prefix, items} = splitMemberOf(value)
  return (
    prefix +
    items
      .map((item) => {
        const ref = refOf(item)
        return ref ? nodeUuid(ref.level, ref.name) : item
      })
      .join(',')
  )
}

/** The racks, rows and rooms a member_of value names, to check that they exist. */
export function topologyRefs(value: string): Array<{level: TopologyLevel; name: string}> {
  return splitMemberOf(value).items.flatMap((item) => refOf(item) ?? [])
}
