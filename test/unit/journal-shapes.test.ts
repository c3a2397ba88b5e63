/**
 * What a node does with a journal key or an image of a shape its release does not know (a newer
 * release's): it never applies it as if it knew it. An image that is not whole in a shape it
 * knows is not used (the rows its keys name are read instead); a key of an unknown kind or part
 * makes the window one to load whole. Pure functions, no database.
 */
import {describe, expect, it} from 'vitest'
import {IMAGE_FORMAT, imageWindows, knownKey, readImage, readKeys, readWindow, type Head} from '../../src/store/journal.js'

const head = (counter: number): Head => ({counter, floor: 0, topologyGeneration: 0})
const rows = {
  providers: [],
  inventories: [],
  traits: [],
  aggregates: [],
  consumers: [{uuid: 'c1'}],
  allocations: [],
  classes: [],
  traitNames: [],
  topologyNodes: [],
  groups: [],
  groupMembers: [],
  moved: [],
  aggregateNames: [],
}
const image = (seq: number, body: object = {keys: [['c', 'c1', 0]], rows}, format: unknown = IMAGE_FORMAT) => ({
  seq,
  body: JSON.stringify(body),
  format,
})

describe('images of a shape this release does not know', () => {
  it("are read when in the format and shape every release so far writes (0.1.0's have no format column value but the default)", () => {
    expect(imageWindows(head(11), 10, [image(11)])).toHaveLength(1)
    expect(imageWindows(head(11), 10, [{seq: 11, body: image(11).body}])).toHaveLength(1)
  })

  it('are not used: another format, a field added, a kind of row or key added, an unknown part, not JSON', () => {
    const shapes = [
      image(11, undefined, 2),
      image(11, {v: 2, keys: [['c', 'c1', 0]], rows}),
      image(11, {keys: [['c', 'c1', 0]], rows: {...rows, reservations: [{id: 1}]}}),
      image(11, {keys: [['r', 'x', 0]], rows}),
      image(11, {keys: [['p', 'p1', 64]], rows}),
      image(11, {keys: [['c', 'c1', 0]], rows: []}),
      {seq: 11, body: '{"keys": [', format: 1},
    ]
    for (const s of shapes) {
      expect(readImage(s), s.body).toBeNull()
      expect(imageWindows(head(11), 10, [s]), s.body).toBeNull()
    }
    // One such image among good ones: none of them is used.
    expect(imageWindows(head(12), 10, [image(11), image(12, undefined, 2)])).toBeNull()
  })
})

describe('journal keys of a kind this release does not know', () => {
  it('are known by kind, and for providers by part', () => {
    for (const kind of ['p', 'c', 'rc', 't', 'tn', 'g', 'an', 'tg']) expect(knownKey({kind, parts: kind === 'p' ? 63 : 0})).toBe(true)
    expect(knownKey({kind: 'r', parts: 0})).toBe(false)
    expect(knownKey({kind: 'p', parts: 64})).toBe(false)
    expect(knownKey({kind: 'c', parts: 1})).toBe(false)
  })

  it('make the window one to load whole, reading no rows', () => {
    const read = readKeys([
      {seq: 11, kind: 'c', key: 'c1', parts: 0},
      {seq: 11, kind: 'r', key: 'reservation-1', parts: 0},
    ])
    expect(read).toEqual({keys: [], large: false, unknown: true})
    expect(readWindow(head(11), read, [], [])).toMatchObject({unknown: true, keys: []})
    expect(readKeys([{seq: 11, kind: 'c', key: 'c1', parts: 0}])).toEqual({keys: [{seq: 11, kind: 'c', key: 'c1', parts: 0}], large: false})
  })
})
