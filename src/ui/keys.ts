/**
 * Moving through the map with the keyboard, as through a tree: the arrows go to the box before or
 * after at the same depth (past the last host of a rack, the first of the next rack), Enter into
 * the first box it holds, Escape out to the one holding it, Home and End to the first and last
 * of its neighbours. Pure: the picture and a key in, the box to go to out.
 */
import type {Box, Picture} from './model.js'

export type Step = 'next' | 'previous' | 'in' | 'out' | 'first' | 'last'

/** The step a key takes (undefined: not one of the map's keys). */
export function stepOfKey(key: string): Step | undefined {
  switch (key) {
    case 'ArrowRight':
    case 'ArrowDown':
      return 'next'
    case 'ArrowLeft':
    case 'ArrowUp':
      return 'previous'
    case 'Enter':
      return 'in'
    case 'Escape':
    case 'Backspace':
      return 'out'
    case 'Home':
      return 'first'
    case 'End':
      return 'last'
    default:
      return undefined
  }
}

/** The box `step` goes to from the box `key` (itself where there is nowhere to go; the cloud when `key` is unknown). */
export function stepFrom(p: Picture, key: string, step: Step): Box {
  const at = p.byKey.get(key)
  if (!at) return p.root
  const parent = p.parentOf.get(key)
  const neighbours = parent ? parent.children : [at]
  const i = neighbours.indexOf(at)
  switch (step) {
    case 'next':
      return neighbours[i + 1] ?? across(p, at, 1) ?? at
    case 'previous':
      return neighbours[i - 1] ?? across(p, at, -1) ?? at
    case 'first':
      return neighbours[0]
    case 'last':
      return neighbours[neighbours.length - 1]
    case 'in':
      return at.children[0] ?? at
    case 'out':
      return parent ?? at
  }
}

/**
 * Past the last (or before the first) of its neighbours: the first (or last) box as deep as `b`
 * in the next (or previous) box of its parent's level that holds one, as a reader goes on from
 * the last host of a rack to the first of the next rack. Undefined at the end of the map.
 */
function across(p: Picture, b: Box, way: 1 | -1): Box | undefined {
  let depth = 0
  let up: Box = b
  for (;;) {
    const parent = p.parentOf.get(up.key)
    if (!parent) return undefined
    depth++
    const grand = p.parentOf.get(parent.key)
    if (!grand) return undefined
    const kin = grand.children
    for (let j = kin.indexOf(parent) + way; j >= 0 && j < kin.length; j += way) {
      const found = edge(kin[j], depth, way)
      if (found) return found
    }
    up = parent
  }
}

/** The first (way 1) or last (way -1) box `depth` levels down from `b`, if it holds one. */
function edge(b: Box, depth: number, way: 1 | -1): Box | undefined {
  if (depth === 0) return b
  const kids = way === 1 ? b.children : [...b.children].reverse()
  for (const c of kids) {
    const found = edge(c, depth - 1, way)
    if (found) return found
  }
  return undefined
}
