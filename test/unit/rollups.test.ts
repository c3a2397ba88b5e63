import {describe, expect, it} from 'vitest'
import {rollupsOf} from '../../src/core/rollups.js'
import {State, newProvider, type Amounts, type Consumer, type Provider, type TopologyLevel} from '../../src/core/state/state.js'
import {Changes} from '../../src/core/state/changes.js'
import {capacityOf} from '../../src/core/inventory-capacity.js'
import {topologyView, type TopologyView} from '../../src/core/topology-view.js'
import {inv} from '../helpers/records.js'
import {U} from './fixtures.js'

/** A seeded generator, so that a failure comes back with the same steps. */
function random(seed: number) {
  let x = seed >>> 0 || 1
  const next = () => {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    return (x >>> 0) / 2 ** 32
  }
  return {next, int: (n: number) => Math.floor(next() * n), pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]}
}

const nonZero = (entries: Iterable<[string, number]>) =>
  new Map([...entries].filter(([, n]) => n !== 0).sort(([a], [b]) => a.localeCompare(b)))

/** The sums walked from the whole State, as the metrics computed them before rollups. */
function walked(s: State) {
  const capacity = new Map<string, number>()
  const used = new Map<string, number>()
  for (const p of s.providers.values()) {
    for (const [rc, i] of p.inventories) capacity.set(rc, (capacity.get(rc) ?? 0) + capacityOf(i))
    for (const [rc, n] of p.usages) used.set(rc, (used.get(rc) ?? 0) + n)
  }
  const topology: unknown[] = []
  const flat = (v: TopologyView) => {
    topology.push({
      uuid: v.uuid,
      level: v.level,
      name: v.name,
      capacity: nonZero(Object.entries(v.capacity)),
      used: nonZero(Object.entries(v.used)),
    })
    for (const c of v.children ?? []) flat(c)
  }
  topologyView(s).forEach(flat)
  const holding = [...s.consumers.values()].filter((c) => c.allocations.size > 0).length
  return {capacity: nonZero(capacity), used: nonZero(used), providers: s.providers.size, holding, topology}
}

function kept(s: State) {
  const c = rollupsOf(s).cloudSums()
  const topology = rollupsOf(s)
    .topologySums()
    .map((v) => ({uuid: v.uuid, level: v.level, name: v.name, capacity: nonZero(v.capacity), used: nonZero(v.used)}))
  return {capacity: nonZero(c.capacity), used: nonZero(c.used), providers: c.providers, holding: c.holding, topology}
}

const CLASSES = ['VCPU', 'MEMORY_MB', 'DISK_GB']
const RACKS = [U(9001), U(9002), U(9003)]
const OTHER_AGGREGATES = [U(9101), U(9102)]

describe('rollups', () => {
  it('equal a walk of the whole State after every kind of change, asked now and then', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const r = random(seed)
      const s = new State()
      let made = 0
      const tx = (fn: () => void) => {
        s.changes = new Changes()
        try {
          fn()
        } finally {
          s.changes = null
        }
      }
      const providers = () => [...s.providers.values()]
      const consumers = () => [...s.consumers.values()]
      const isUnder = (p: Provider, ancestor: Provider): boolean => {
        for (let a: Provider | undefined = p; a; a = a.parent ? s.providers.get(a.parent) : undefined) if (a === ancestor) return true
        return false
      }
      for (let step = 0; step < 150; step++) {
        const kind = r.int(13)
        tx(() => {
          const all = providers()
          if (kind === 0 || all.length < 3) {
            const parent = all.length && r.next() < 0.4 ? r.pick(all) : null
            const p = newProvider(U(++made), `p${made}`, parent, 0)
            if (r.next() < 0.5) p.inventories = new Map([[r.pick(CLASSES), inv(1 + r.int(64))]])
            s.addProvider(p)
            if (r.next() < 0.6) s.setAggregates(p, [r.pick([...RACKS, ...OTHER_AGGREGATES])])
          } else if (kind === 1) {
            const p = r.pick(all)
            if (p.children.size === 0 && p.allocations.size === 0) s.removeProvider(p)
          } else if (kind === 2) {
            s.setInventory(r.pick(all), r.pick(CLASSES), {
              ...inv(1 + r.int(64)),
              reserved: r.int(3),
              allocation_ratio: r.pick([1, 1.5, 16]),
            })
          } else if (kind === 3) {
            const p = r.pick(all)
            const rc = r.pick(CLASSES)
            if (p.inventories.has(rc) && !p.usages.has(rc)) s.deleteInventory(p, rc)
          } else if (kind === 4) {
            const p = r.pick(all)
            s.setAggregates(p, r.next() < 0.3 ? [] : [r.pick(RACKS), ...(r.next() < 0.3 ? [r.pick(RACKS), r.pick(OTHER_AGGREGATES)] : [])])
          } else if (kind === 5) {
            const p = r.pick(all)
            const to = r.next() < 0.3 ? null : r.pick(all)
            if (to === null || !isUnder(to, p)) s.reparentProvider(p, to)
          } else if (kind === 6 || kind === 7) {
            let c: Consumer | undefined = r.next() < 0.5 ? r.pick(consumers().concat([undefined as never])) : undefined
            if (!c) {
              c = {
                uuid: U(50000 + ++made),
                project: 'p',
                user: 'u',
                type: null,
                generation: 0,
                createdAt: 0,
                updatedAt: 0,
                allocations: new Map(),
              }
              s.addConsumer(c)
            }
            const allocations = new Map<string, Amounts>()
            // Only where there is inventory of the class, as every write path checks (a root whose tree
            // holds none is no host, and is in no rack's sums).
            for (let k = r.int(3); k > 0; k--) {
              const p = r.pick(all)
              const held = [...p.inventories.keys()]
              if (held.length) allocations.set(p.uuid, new Map([[r.pick(held), 1 + r.int(8)]]))
            }
            s.setAllocations(c, allocations)
          } else if (kind === 8) {
            const cs = consumers()
            if (cs.length) s.removeConsumer(r.pick(cs))
          } else if (kind === 9) {
            // Racks, rows and rooms come and go, and move.
            const levels: TopologyLevel[] = ['rack', 'row', 'room']
            const uuid = r.pick([...RACKS, U(9201), U(9202), U(9301)])
            const level: TopologyLevel = RACKS.includes(uuid)
              ? r.pick(['rack', 'rack', 'row'] as TopologyLevel[])
              : uuid === U(9301)
                ? 'room'
                : r.pick(levels)
            if (r.next() < 0.2) s.removeTopologyNode(uuid)
            else
              s.setTopologyNode({
                uuid,
                name: `n${uuid.slice(-4)}`,
                level,
                parent: r.pick([null, U(9201), U(9202), U(9301)]),
                createdAt: 0,
                updatedAt: 0,
              })
          } else if (kind === 11) {
            // A provider starts or stops sharing its inventory: it (and a sharing root's tree) leaves or joins its racks' sums.
            const p = r.pick(all)
            const traits = new Set(p.traits)
            if (traits.has('MISC_SHARES_VIA_AGGREGATE')) traits.delete('MISC_SHARES_VIA_AGGREGATE')
            else traits.add('MISC_SHARES_VIA_AGGREGATE')
            s.setTraits(p, traits)
          } else if (kind === 10 && r.next() < 0.2) {
            const from = r.pick(CLASSES)
            if (!s.classes.has(from)) s.addClass(from, 0)
            s.renameClass(from, `CUSTOM_${from}_${step}`, 0)
            CLASSES[CLASSES.indexOf(from)] = `CUSTOM_${from}_${step}`
          }
        })
        if (r.next() < 0.4) expect(kept(s), `seed ${seed}, step ${step}`).toEqual(walked(s))
      }
      expect(kept(s), `seed ${seed}, at the end`).toEqual(walked(s))
      CLASSES.splice(0, CLASSES.length, 'VCPU', 'MEMORY_MB', 'DISK_GB')
    }
  })
})
