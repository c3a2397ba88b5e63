/**
 * The change journal's images (journal.ts): which writes are keyed, and when the images since a
 * position can stand for the transactions they record. Pure functions, no database.
 */
import {describe, expect, it} from 'vitest'
import {Changes, PART} from '../../src/core/state/changes.js'
import {imageWindows, keyedKeys, readAhead, type Head} from '../../src/store/journal.js'

const head = (counter: number, floor = 0): Head => ({counter, floor, topologyGeneration: 7})
const image = (seq: number, keys: Array<[string, string, number]> = [['c', `consumer-${seq}`, 0]]) => ({
  seq,
  body: JSON.stringify({
    keys,
    rows: {
      providers: [],
      inventories: [],
      traits: [],
      aggregates: [],
      consumers: [],
      allocations: [],
      classes: [],
      traitNames: [],
      topologyNodes: [],
      groups: [],
      groupMembers: [],
      moved: [],
      aggregateNames: [],
    },
  }),
})

describe('images since a position', () => {
  it('stand for the transactions when every one up to the head recorded one', () => {
    const windows = imageWindows(head(12), 10, [image(11), image(12)])
    expect(windows?.map((w) => w.keys)).toEqual([
      [{seq: 11, kind: 'c', key: 'consumer-11', parts: 0}],
      [{seq: 12, kind: 'c', key: 'consumer-12', parts: 0}],
    ])
    expect(windows?.[0].head.topologyGeneration).toBe(7)
  })

  it('ignore what was committed after the head was read', () => {
    expect(imageWindows(head(11), 10, [image(11), image(12)])).toHaveLength(1)
  })

  it('do not when one is missing, the journal was pruned past the position, or the head is behind it', () => {
    expect(imageWindows(head(12), 10, [image(12)])).toBeNull()
    expect(imageWindows(head(12), 10, [image(11)])).toBeNull()
    expect(imageWindows(head(12, 11), 10, [image(11), image(12)])).toBeNull()
    expect(imageWindows(head(9), 10, [])).toBeNull()
  })

  it('are nothing to apply when nothing changed', () => {
    expect(imageWindows(head(10), 10, [])).toEqual([])
  })

  it('come from one statement: the head rows and the images in order', () => {
    const rows = [
      {key: 'image', value: '12', body: image(12).body},
      {key: 'change_counter', value: '12', body: null},
      {key: 'journal_floor', value: '3', body: null},
      {key: 'image', value: '11', body: image(11).body},
    ]
    const ahead = readAhead(rows)
    expect(ahead.head).toEqual({counter: 12, floor: 3, topologyGeneration: 0})
    expect(ahead.images.map((r) => r.seq)).toEqual([11, 12])
  })
})

describe('a keyed write', () => {
  it('is one that changes allocations: consumers and the generations of their providers', () => {
    const ch = new Changes()
    ch.consumers.add('c1')
    ch.deletedConsumers.add('c2')
    ch.providers.set('p1', PART.generation)
    expect(
      keyedKeys(ch)
        ?.map((k) => `${k.kind}:${k.key}`)
        .sort(),
    ).toEqual(['c:c1', 'c:c2', 'p:p1'])
  })

  it('is not one that changes a provider otherwise, or anything else', () => {
    const inventory = new Changes()
    inventory.providers.set('p1', PART.generation | PART.inventories)
    expect(keyedKeys(inventory)).toBeNull()
    const trait = new Changes()
    trait.consumers.add('c1')
    trait.traits.add('CUSTOM_X')
    expect(keyedKeys(trait)).toBeNull()
    const moved = new Changes()
    moved.moved.add('c1')
    expect(keyedKeys(moved)).toBeNull()
    const many = new Changes()
    for (let i = 0; i < 501; i++) many.consumers.add(`c${i}`)
    expect(keyedKeys(many)).toBeNull()
  })
})
