/**
 * Moving through the map with the keyboard, as through a tree: the arrows go to the box before or
 * after among its neighbours, Enter into the first box it holds, Escape out to the one holding it,
 * Home and End to the first and last neighbour. Pure: the picture and a key in, the box to go to out.
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
      return neighbours[Math.min(neighbours.length - 1, i + 1)]
    case 'previous':
      return neighbours[Math.max(0, i - 1)]
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
