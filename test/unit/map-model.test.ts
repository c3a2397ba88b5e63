/**
 * The map page's pure parts (src/ui): the daemon's answers turned into the picture's boxes
 * (model.ts: level, name, fit, tone, text, what a screen reader says), the view in the URL
 * (view.ts), moving with the keyboard (keys.ts) and the arrows of moves (moves.ts). The answers
 * are the core's (core/map/) on the planner's cloud (test/helpers/planner-cloud.ts).
 */
import {describe, expect, it} from 'vitest'
import {flavorRequest} from '../../src/core/headroom/flavors.js'
import {HEADROOM_LEVELS} from '../../src/core/headroom/headroom.js'
import {mapLayout, type MapLayoutAnswer} from '../../src/core/map/map-layout.js'
import {mapValues} from '../../src/core/map/map-values.js'
import {stepFrom, stepOfKey} from '../../src/ui/keys.js'
import {fitTone, inOrder, percent, picture, scaleOf, strandedText, usageTone} from '../../src/ui/model.js'
import {arrows, displacedMoves} from '../../src/ui/moves.js'
import {answerable, parseView, ratioOf, refOfKey, tokenOfFragment, valuesQuery, viewQuery, without, withRatio} from '../../src/ui/view.js'
import {plannerCloud, plannerState} from '../helpers/planner-cloud.js'

const cloud = plannerCloud()
const flavors = cloud.flavors.map(flavorRequest)
const s = plannerState(cloud)
const layout: MapLayoutAnswer = {...mapLayout(s), flavors: flavors.map((f) => f.flavor)}

describe("the map's picture", () => {
  it("is the layout's boxes, each domain with the numbers of its level and name", () => {
    const v = mapValues(s, flavors, {flavor: 'm1.large', class: 'VCPU'})
    const p = picture(layout, v.now, {flavor: 'm1.large', cls: null})
    const boxes = inOrder(p.root)
    expect(p.root).toMatchObject({key: 'cloud:cloud', level: 'cloud', hostCount: 48, disabledCount: 3})
    expect(boxes.filter((b) => b.level === 'host').length).toBe(48)
    // Every domain capacity counts is a box with its numbers, and the text it shows is its fit.
    let domains = 0
    for (const level of HEADROOM_LEVELS) {
      const l = v.now.levels[level]
      l.names.forEach((name, i) => {
        const b = p.byKey.get(`${level}:${name}`)!
        expect(b, `${level} ${name}`).toBeDefined()
        expect([b.fit, b.pooled, b.loss, b.disabledFit, b.shown]).toEqual([
          l.fit![i],
          l.pooled![i],
          l.fragmentation_loss![i],
          l.disabled_fit![i],
          String(l.fit![i]),
        ])
        expect(b.binding).toBe(l.binding![i] < 0 ? null : v.now.bindings[l.binding![i]])
        domains++
      })
    }
    expect(domains).toBe(boxes.length)
    // A box holds what its children hold.
    for (const b of boxes.filter((x) => x.children.length)) expect(b.hostCount).toBe(b.children.reduce((a, c) => a + c.hostCount, 0))
    // Disabled hosts are marked, and counted up.
    const disabled = boxes.filter((b) => b.disabled).map((b) => b.name)
    expect(disabled.sort()).toEqual([...cloud.disabled].sort())
    for (const name of disabled) expect(p.byKey.get(`host:${name}`)!.label).toContain('disabled')
    // The tones are the fit against the level's largest.
    const scale = scaleOf(v.now)
    for (const b of boxes) expect(b.tone).toBe(fitTone(b.fit, scale[b.level]))
    expect(p.byKey.get('room:room1')!.label).toMatch(/^room room1; fit \d+ m1\.large; pooled \d+, loss \d+/)
  })

  it("is coloured by a class's use instead, with the fit still carried", () => {
    const v = mapValues(s, flavors, {flavor: 'm1.large', class: 'VCPU'})
    const p = picture(layout, v.now, {flavor: 'm1.large', cls: 'VCPU'})
    expect(p.mode).toBe('use')
    const l = v.now.levels.rack
    l.names.forEach((name, i) => {
      const b = p.byKey.get(`rack:${name}`)!
      expect([b.capacity, b.used, b.fit]).toEqual([l.capacity![i], l.used![i], l.fit![i]])
      expect(b.tone).toBe(usageTone(l.used![i], l.capacity![i]))
      expect(b.shown).toBe(percent(l.used![i], l.capacity![i]))
    })
  })

  it('sums stranded capacity per domain', () => {
    const numbers = {
      levels: mapValues(s, flavors, {flavor: null, class: null}).now.levels,
      bindings: [],
      pools: {},
      stranded: [
        {host: layout.hosts[0], class: 'VCPU', amount: 3, bottleneck: 'MEMORY_MB'},
        {host: layout.hosts[0], class: 'MEMORY_MB', amount: 2048, bottleneck: 'VCPU'},
        {host: layout.hosts[1], class: 'VCPU', amount: 2, bottleneck: 'MEMORY_MB'},
      ],
    }
    const p = picture(layout, numbers, {flavor: null, cls: null})
    expect(p.byKey.get(`host:${layout.hosts[0]}`)!.stranded).toEqual({VCPU: 3, MEMORY_MB: 2048})
    expect(p.root.stranded).toEqual({VCPU: 5, MEMORY_MB: 2048})
    expect(strandedText(p.root.stranded)).toBe('2 GiB RAM, 5 VCPU')
    expect(p.root.label).toContain('stranded 2 GiB RAM, 5 VCPU')
  })

  it('after a what-if: the lost domains marked, each fit beside the one before, on the same scale', () => {
    const rack = layout.tree[0].children![0].children![0]
    const v = mapValues(s, flavors, {flavor: 'm1.large', class: null, without: [{level: 'rack', name: rack.name}]})
    const now = picture(layout, v.now, {flavor: 'm1.large', cls: null})
    const after = picture(layout, v.after!, {flavor: 'm1.large', cls: null, before: v.now, scale: scaleOf(v.now)})
    const lost = inOrder(after.root).filter((b) => b.lost)
    expect(lost.map((b) => b.key).sort()).toEqual([`rack:${rack.name}`, ...rack.hosts!.map((i) => `host:${layout.hosts[i]}`)].sort())
    for (const b of lost) expect([b.fit, b.shown, b.tone]).toEqual([0, 'lost', 'lost'])
    for (const b of inOrder(after.root)) expect(b.before, b.key).toBe(now.byKey.get(b.key)!.fit)
    expect(after.root.fit).toBe(v.after!.levels.cloud.fit![0])
    expect(after.root.label).toContain(`(before ${now.root.fit})`)
    // The displaced consumers' moves: from the lost rack's hosts, to others.
    const moves = displacedMoves(v.what_if!.displaced, new Set(layout.hosts))
    expect(moves.length).toBe(v.what_if!.displaced.filter((d) => d.to).length)
    const lostHosts = new Set(rack.hosts!.map((i) => layout.hosts[i]))
    for (const m of moves) expect([lostHosts.has(m.from), lostHosts.has(m.to)]).toEqual([true, false])
  })

  it('puts hosts in no rack in a group of their own, and gives racks without hosts no tone', () => {
    const l: MapLayoutAnswer = {
      hosts: ['a', 'b', 'c'],
      disabled: [],
      tree: [
        {
          level: 'row',
          name: 'w',
          children: [
            {level: 'rack', name: 'r', hosts: [0]},
            {level: 'rack', name: 'empty', hosts: []},
          ],
        },
      ],
      unracked: [1, 2],
      pools: [],
      classes: ['VCPU'],
      flavors: ['f'],
    }
    const level = (names: string[], fit: number[]) => ({
      names,
      fit,
      pooled: fit,
      fragmentation_loss: fit.map(() => 0),
      disabled_fit: fit.map(() => 0),
      binding: fit.map(() => 0),
    })
    const numbers = {
      levels: {
        host: level(['a', 'b', 'c'], [4, 0, 2]),
        rack: level(['r'], [4]),
        row: level(['w'], [4]),
        room: level([], []),
        cloud: level(['cloud'], [6]),
      },
      bindings: ['VCPU'],
      stranded: [],
      pools: {},
    }
    const p = picture(l, numbers, {flavor: 'f', cls: null})
    expect(p.root.children.map((b) => b.key)).toEqual(['row:w', 'unracked:no rack'])
    const group = p.byKey.get('unracked:no rack')!
    expect([group.hostCount, group.fit, group.shown, group.children.map((b) => b.shown)]).toEqual([2, null, '', ['0', '2']])
    expect(p.byKey.get('host:b')!.tone).toBe('fit-0')
    expect(p.byKey.get('host:c')!.tone).toBe('fit-2')
    expect(p.byKey.get('host:a')!.tone).toBe('fit-4')
    expect(p.byKey.get('rack:empty')!.tone).toBe('none')
  })

  it('gives tones in buckets', () => {
    expect([0, 1, 25, 26, 50, 51, 75, 76, 100].map((f) => fitTone(f, 100))).toEqual([
      'fit-0',
      'fit-1',
      'fit-1',
      'fit-2',
      'fit-2',
      'fit-3',
      'fit-3',
      'fit-4',
      'fit-4',
    ])
    expect([0, 24, 25, 49, 50, 74, 75, 89, 90, 120].map((u) => usageTone(u, 100))).toEqual([
      'use-0',
      'use-0',
      'use-1',
      'use-1',
      'use-2',
      'use-2',
      'use-3',
      'use-3',
      'use-4',
      'use-4',
    ])
    expect([fitTone(null, 10), usageTone(1, 0), percent(1, 0), percent(1, 3)]).toEqual(['none', 'none', '—', '33%'])
  })
})

describe("the map's view in its URL", () => {
  it('reads and writes the view, and only the values asked of the daemon', () => {
    const v = parseView('?flavor=m1.large&class=VCPU&without=rack:rack-a1&without=host:cn:1&ratio=VCPU=8&select=row:row-1')
    expect(v).toEqual({
      flavor: 'm1.large',
      cls: 'VCPU',
      without: [
        {level: 'rack', name: 'rack-a1'},
        {level: 'host', name: 'cn:1'},
      ],
      ratios: [['VCPU', 8]],
      select: {level: 'row', name: 'row-1'},
    })
    expect(parseView(viewQuery(v))).toEqual(v)
    expect(valuesQuery(v)).toBe('?flavor=m1.large&class=VCPU&without=rack%3Arack-a1&without=host%3Acn%3A1&ratio=VCPU%3D8')
    expect(parseView('?without=cloud:cloud&without=shelf:x&ratio=VCPU=0&ratio=vcpu=2&select=shelf:x')).toEqual({
      flavor: null,
      cls: null,
      without: [],
      ratios: [],
      select: null,
    })
    expect(viewQuery(parseView(''))).toBe('')
    const w = without(without(v, {level: 'room', name: 'room-2'}), {level: 'room', name: 'room-2'})
    expect(w.without.length).toBe(3)
    expect(withRatio(v, 'VCPU', 4).ratios).toEqual([['VCPU', 4]])
    expect(ratioOf('MEMORY_MB=1.5')).toEqual(['MEMORY_MB', 1.5])
    expect(refOfKey('host:cn:1')).toEqual({level: 'host', name: 'cn:1'})
    expect(refOfKey('unracked:no rack')).toBeNull()
  })

  it('asks what the daemon can answer: a flavor of its catalog, a class its hosts hold, a use without a catalog', () => {
    const has = {flavors: ['m1.small', 'm1.large'], classes: ['MEMORY_MB', 'VCPU']}
    const v = parseView('?flavor=m1.large&class=VCPU')
    expect(answerable(v, has)).toMatchObject({flavor: 'm1.large', cls: 'VCPU'})
    expect(answerable(parseView('?flavor=gone&class=GONE'), has)).toMatchObject({flavor: 'm1.small', cls: null})
    expect(answerable(parseView(''), {flavors: [], classes: has.classes})).toMatchObject({flavor: null, cls: 'VCPU'})
    expect(answerable(parseView(''), {flavors: [], classes: ['DISK_GB']})).toMatchObject({flavor: null, cls: 'DISK_GB'})
    expect(answerable(parseView(''), {flavors: [], classes: []})).toMatchObject({flavor: null, cls: null})
  })

  it('takes the token from the fragment only', () => {
    expect(tokenOfFragment('#token=s3cr%2Bt')).toBe('s3cr+t')
    expect(tokenOfFragment('#a=1&token=x')).toBe('x')
    expect(tokenOfFragment('')).toBeNull()
    expect(tokenOfFragment('#token=')).toBeNull()
  })
})

describe('moving through the map', () => {
  const v = mapValues(s, flavors, {flavor: 'm1.large', class: null})
  const p = picture(layout, v.now, {flavor: 'm1.large', cls: null})
  const at = (key: string, ...keys: string[]): string => keys.reduce((k, key) => stepFrom(p, k, stepOfKey(key)!).key, key)
  const room1 = p.root.children[0]
  const row = room1.children[0]
  const rack = row.children[0]

  it('goes in with Enter, out with Escape, along with the arrows, to the ends with Home and End', () => {
    expect(at('cloud:cloud', 'Enter')).toBe(room1.key)
    expect(at('cloud:cloud', 'Enter', 'Enter', 'Enter', 'Enter')).toBe(rack.children[0].key)
    expect(at(rack.children[0].key, 'ArrowRight')).toBe(rack.children[1].key)
    expect(at(rack.children[0].key, 'ArrowLeft')).toBe(rack.children[0].key)
    expect(at(rack.children[0].key, 'End')).toBe(rack.children.at(-1)!.key)
    expect(at(rack.children.at(-1)!.key, 'Home', 'ArrowDown')).toBe(rack.children[1].key)
    expect(at(rack.children[0].key, 'Escape', 'Escape')).toBe(row.key)
    expect(at('cloud:cloud', 'Escape', 'ArrowUp')).toBe('cloud:cloud')
    // Past the last host of a rack, the first of the next rack (in the next row or room when the rack is its row's last).
    const next = row.children[1]
    expect(at(rack.children.at(-1)!.key, 'ArrowRight')).toBe(next.children[0].key)
    expect(at(next.children[0].key, 'ArrowLeft')).toBe(rack.children.at(-1)!.key)
    const lastRack = row.children.at(-1)!
    expect(at(lastRack.children.at(-1)!.key, 'ArrowDown')).toBe(room1.children[1].children[0].children[0].key)
    const hosts = inOrder(p.root).filter((b) => b.level === 'host')
    expect(at(hosts.at(-1)!.key, 'ArrowRight')).toBe(hosts.at(-1)!.key)
    expect(at(hosts[0].key, 'ArrowLeft')).toBe(hosts[0].key)
    // Every host in turn, as the map lists them.
    let k = hosts[0].key
    const walked = [k]
    for (let n = 1; n < hosts.length; n++) walked.push((k = at(k, 'ArrowRight')))
    expect(walked).toEqual(hosts.map((h) => h.key))
    expect(at(rack.children[0].key, 'Backspace')).toBe(rack.key)
    expect(stepFrom(p, 'nowhere', 'in').key).toBe('cloud:cloud')
    expect(stepOfKey('x')).toBeUndefined()
  })
})

describe('arrows', () => {
  it('are one per pair of hosts, the most taken first, at most as many as asked', () => {
    const plan = [
      {consumer: '1', from: 'a', to: 'b'},
      {consumer: '2', from: 'a', to: 'b'},
      {consumer: '3', from: 'a', to: 'c'},
      {consumer: '4', from: 'd', to: 'b'},
    ]
    expect(arrows(plan)).toEqual({
      arrows: [
        {from: 'a', to: 'b', count: 2},
        {from: 'a', to: 'c', count: 1},
        {from: 'd', to: 'b', count: 1},
      ],
      left: 0,
    })
    expect(arrows(plan, 1)).toEqual({arrows: [{from: 'a', to: 'b', count: 2}], left: 2})
    const displaced = [
      {consumer: 'x', from: ['a'], to: ['b', 'pool']},
      {consumer: 'y', from: ['a'], to: null, why: 'nowhere'},
    ]
    expect(displacedMoves(displaced, new Set(['a', 'b']))).toEqual([{consumer: 'x', from: 'a', to: 'b'}])
  })
})
