/**
 * The in-memory model of a placement database. It is the single source every read is
 * served from; the store keeps it exact (loaded at start, patched by each committed
 * write, reloaded when another process commits to the same file).
 *
 * Mutations go through the methods below so that the dirty set the store flushes in
 * the same transaction always matches what changed here.
 */

import type {AggregateName} from '../aggregate-names.js'
import type {Group} from '../groups.js'
import {DISABLED_TRAIT, isSharing} from '../host.js'
import {type Changes, PART, type ProviderPart} from './changes.js'
import {NOBODY, type StateListener} from './listener.js'
import {ShapeLog} from './shape-log.js'
import {SharedValues, emptyMap, emptySet, ownMap, ownSet} from './shared-collections.js'

export interface Inventory {
  total: number
  reserved: number
  min_unit: number
  max_unit: number
  step_size: number
  allocation_ratio: number
}

/** Amounts per resource class. */
export type Amounts = Map<string, number>

export interface Provider {
  uuid: string
  name: string
  /** Creation order, the same in every process: the row's seq (0 until the provider is first written). */
  seq: number
  generation: number
  parent: string | null
  root: string
  createdAt: number
  updatedAt: number
  inventories: Map<string, Inventory>
  traits: Set<string>
  aggregates: Set<string>
  children: Set<string>
  /** Derived: total used per class over every consumer. */
  usages: Amounts
  /** Derived: consumer uuid -> amounts this consumer holds here. */
  allocations: Map<string, Amounts>
  /** Why the host is out of service, while it carries COMPUTE_STATUS_DISABLED (placemat's own: core/host-status.ts). */
  disabledReason?: string
}

export interface Consumer {
  uuid: string
  project: string
  user: string
  type: string | null
  generation: number
  createdAt: number
  updatedAt: number
  /** provider uuid -> amounts */
  allocations: Map<string, Amounts>
}

/**
 * A consumer that gave all its allocations to another (placemat's move, core/consumer-moves.ts): Placement
 * deletes the record of a consumer left with nothing, so what it was is kept here until it holds
 * allocations again.
 */
export interface MovedConsumer {
  uuid: string
  /** The consumer that received its allocations. */
  movedTo: string
  project: string
  user: string
  type: string | null
  movedAt: number
}

export interface NamedRecord {
  id: number
  name: string
  createdAt: number
  updatedAt: number
}

export type TopologyLevel = 'room' | 'row' | 'rack'

/** A rack, row or room: a named aggregate (its uuid is the aggregate's) inside its parent node. */
export interface TopologyNode {
  uuid: string
  name: string
  level: TopologyLevel
  parent: string | null
  createdAt: number
  updatedAt: number
}

export class State {
  providers = new Map<string, Provider>()
  providerByName = new Map<string, Provider>()
  consumers = new Map<string, Consumer>()
  classes = new Map<string, NamedRecord>()
  traits = new Map<string, NamedRecord>()
  /** aggregate uuid -> member provider uuids */
  aggregateMembers = new Map<string, Set<string>>()
  /** Racks, rows and rooms by aggregate uuid (placemat's topology). */
  topology = new Map<string, TopologyNode>()
  /** Placement groups by name (placemat's own: core/groups.ts). */
  groups = new Map<string, Group>()
  /** Consumers that gave their allocations away and hold nothing, by uuid (core/consumer-moves.ts). */
  moved = new Map<string, MovedConsumer>()
  /** Names apply files gave aggregates, by aggregate uuid (placemat's own: core/aggregate-names.ts). */
  aggregateNames = new Map<string, AggregateName>()
  /** Bumped on every topology change, so layout edits can be guarded like provider writes. */
  topologyGeneration = 0
  /** Bumped on every committed change; caches key on it. */
  version = 0
  /**
   * Bumped by every change other than allocations and generations: providers, trees,
   * inventories, traits, aggregates, class and trait names. Indexes of the providers key on it,
   * so that a claim does not make them re-check every provider.
   */
  shapeVersion = 0
  /** Which providers each shapeVersion bump touched. */
  readonly shapeLog = new ShapeLog()
  /** One copy of each distinct inventory set, trait set and aggregate set. */
  readonly shared = new SharedValues()
  /** Told of every change (the rollups attach themselves when first asked: rollupsOf). */
  listener: StateListener = NOBODY
  /** Set while a transaction runs; null otherwise. */
  changes: Changes | null = null
  private nextClassId = 10000
  private nextTraitId = 1

  setNextIds(classId: number, traitId: number): void {
    this.nextClassId = Math.max(classId, 10000)
    this.nextTraitId = traitId
  }

  // ---- reads -------------------------------------------------------------

  provider(uuid: string): Provider | undefined {
    return this.providers.get(uuid)
  }

  /** Every provider in the tree rooted at `uuid` (itself first, then depth-first). */
  subtree(uuid: string): Provider[] {
    const out: Provider[] = []
    const walk = (u: string) => {
      const p = this.providers.get(u)
      if (!p) return
      out.push(p)
      for (const c of p.children) walk(c)
    }
    walk(uuid)
    return out
  }

  // ---- mutation primitives (only valid inside a transaction) -------------

  /** A change of shape to provider `uuid` (`added`: it was just added). */
  private reshaped(uuid: string, added = false): void {
    this.shapeLog.note(++this.shapeVersion, uuid, added)
  }

  /** A change of shape that is not one provider's (class names, a reload). */
  reshapedAll(): void {
    this.shapeLog.noteAll(++this.shapeVersion)
    this.listener.forgetAll()
  }

  private get tx(): Changes {
    if (!this.changes) throw new Error('state mutated outside a transaction')
    return this.changes
  }

  markProvider(p: Provider, ...parts: ProviderPart[]): void {
    let bits = this.tx.providers.get(p.uuid) ?? 0
    for (const part of parts) bits |= PART[part]
    this.tx.providers.set(p.uuid, bits)
  }

  /** Bumps the generation and touches updated_at, as Placement does on every provider write. */
  bumpProvider(p: Provider, now: number): void {
    p.generation += 1
    p.updatedAt = now
    this.markProvider(p, 'generation')
  }

  addProvider(p: Provider): void {
    this.reshaped(p.uuid, true)
    this.providers.set(p.uuid, p)
    this.providerByName.set(p.name, p)
    if (p.parent) this.adopt(this.providers.get(p.parent), p.uuid)
    this.listMember(p)
    this.listener.provider(p, 1)
    this.tx.deletedProviders.delete(p.uuid)
    this.markProvider(p, 'created', 'row', 'inventories', 'traits', 'aggregates')
  }

  renameProvider(p: Provider, name: string): void {
    if (this.providerByName.get(p.name) === p) this.providerByName.delete(p.name)
    p.name = name
    this.providerByName.set(name, p)
    this.markProvider(p, 'row')
  }

  /** Moves `p` under `parent` (or makes it a root), re-rooting its whole subtree. */
  reparentProvider(p: Provider, parent: Provider | null): void {
    this.listener.reshaped(p)
    if (p.parent) this.disown(this.providers.get(p.parent), p.uuid)
    p.parent = parent ? parent.uuid : null
    if (parent) this.adopt(parent, p.uuid)
    const root = parent ? parent.root : p.uuid
    for (const q of this.subtree(p.uuid)) {
      this.reshaped(q.uuid) // p itself first
      if (q.root !== root) {
        q.root = root
        this.markProvider(q, 'row')
      }
    }
    this.listener.reshaped(p)
    this.markProvider(p, 'row')
  }

  removeProvider(p: Provider): void {
    this.reshaped(p.uuid)
    this.listener.provider(p, -1)
    this.providers.delete(p.uuid)
    if (this.providerByName.get(p.name) === p) this.providerByName.delete(p.name)
    if (p.parent) this.disown(this.providers.get(p.parent), p.uuid)
    for (const agg of p.aggregates) this.dropMember(agg, p.uuid)
    this.tx.providers.delete(p.uuid)
    this.tx.deletedProviders.add(p.uuid)
  }

  setInventory(p: Provider, rc: string, inv: Inventory): void {
    this.reshaped(p.uuid)
    this.listener.inventory(p, rc, p.inventories.get(rc), inv)
    p.inventories = ownMap(p.inventories)
    p.inventories.set(rc, inv)
    this.markProvider(p, 'inventories')
  }

  /** Gives p the shared copy of its inventory set (after a change of several classes). */
  shareInventories(p: Provider): void {
    p.inventories = this.shared.inventories(p.inventories)
  }

  deleteInventory(p: Provider, rc: string): void {
    this.reshaped(p.uuid)
    this.listener.inventory(p, rc, p.inventories.get(rc), undefined)
    p.inventories = ownMap(p.inventories)
    p.inventories.delete(rc)
    this.markProvider(p, 'inventories')
  }

  setTraits(p: Provider, traits: Iterable<string>): void {
    this.reshaped(p.uuid)
    const wasSharing = isSharing(p)
    p.traits = this.shared.traits([...traits])
    if (isSharing(p) !== wasSharing) this.listener.sharingChanged()
    this.markProvider(p, 'traits')
    // Why a host was out of service goes with the trait that took it out, whoever removes it.
    if (p.disabledReason !== undefined && !p.traits.has(DISABLED_TRAIT)) {
      p.disabledReason = undefined
      this.markProvider(p, 'row')
    }
  }

  setAggregates(p: Provider, aggregates: Iterable<string>): void {
    this.reshaped(p.uuid)
    this.listener.reshaped(p)
    for (const agg of p.aggregates) this.dropMember(agg, p.uuid)
    p.aggregates = this.shared.aggregates([...aggregates])
    this.listMember(p)
    this.listener.reshaped(p)
    this.markProvider(p, 'aggregates')
  }

  /** Lists `child` among `parent`'s children (no transaction needed: loading links trees with it too). */
  adopt(parent: Provider | undefined, child: string): void {
    if (!parent) return
    parent.children = ownSet(parent.children)
    parent.children.add(child)
  }

  /** Lists `p` among the members of each of its aggregates (no transaction needed: loading fills them with it too). */
  listMember(p: Provider): void {
    for (const agg of p.aggregates) {
      let set = this.aggregateMembers.get(agg)
      if (!set) this.aggregateMembers.set(agg, (set = new Set()))
      set.add(p.uuid)
    }
  }

  private disown(parent: Provider | undefined, child: string): void {
    if (!parent) return
    parent.children = ownSet(parent.children)
    parent.children.delete(child)
  }

  private dropMember(agg: string, uuid: string): void {
    const set = this.aggregateMembers.get(agg)
    if (!set) return
    set.delete(uuid)
    if (set.size === 0) this.aggregateMembers.delete(agg)
  }

  addConsumer(c: Consumer): void {
    this.listener.holding(this.consumers.get(c.uuid)?.allocations.size ?? 0, c.allocations.size)
    this.consumers.set(c.uuid, c)
    this.tx.deletedConsumers.delete(c.uuid)
    this.tx.consumers.add(c.uuid)
  }

  markConsumer(c: Consumer): void {
    this.tx.consumers.add(c.uuid)
  }

  removeConsumer(c: Consumer): void {
    this.setAllocations(c, new Map())
    this.consumers.delete(c.uuid)
    this.tx.consumers.delete(c.uuid)
    this.tx.deletedConsumers.add(c.uuid)
  }

  /** Replaces all of a consumer's allocations, keeping provider usages exact. */
  setAllocations(c: Consumer, allocations: Map<string, Amounts>): void {
    for (const [puuid, amounts] of c.allocations) {
      const p = this.providers.get(puuid)
      if (!p) continue
      p.usages = ownMap(p.usages)
      p.allocations = ownMap(p.allocations)
      for (const [rc, used] of amounts) {
        const before = p.usages.get(rc) ?? 0
        const left = before - used
        if (left > 0) p.usages.set(rc, left)
        else p.usages.delete(rc)
        this.listener.usage(p, rc, Math.max(left, 0) - before)
      }
      p.allocations.delete(c.uuid)
    }
    this.listener.holding(c.allocations.size, allocations.size)
    c.allocations = allocations
    for (const [puuid, amounts] of allocations) {
      const p = this.providers.get(puuid)
      if (!p) continue
      p.usages = ownMap(p.usages)
      p.allocations = ownMap(p.allocations)
      for (const [rc, used] of amounts) {
        p.usages.set(rc, (p.usages.get(rc) ?? 0) + used)
        this.listener.usage(p, rc, used)
      }
      p.allocations.set(c.uuid, amounts)
    }
    this.tx.consumers.add(c.uuid)
  }

  addClass(name: string, now: number, id?: number): NamedRecord {
    this.shapeVersion++
    const rec = {id: id ?? this.nextClassId++, name, createdAt: now, updatedAt: now}
    if (rec.id >= this.nextClassId) this.nextClassId = rec.id + 1
    this.classes.set(name, rec)
    if (this.changes) {
      this.changes.deletedClasses.delete(name)
      this.changes.classes.add(name)
    }
    return rec
  }

  /** Renames a class everywhere it is used (inventories and allocations refer to it by name). */
  renameClass(from: string, to: string, now: number): void {
    this.reshapedAll()
    const rec = this.classes.get(from)!
    this.classes.delete(from)
    rec.name = to
    rec.updatedAt = now
    this.classes.set(to, rec)
    this.tx.deletedClasses.add(from)
    this.tx.classes.add(to)
    const rename = <V>(m: Map<string, V>) => {
      if (!m.has(from)) return false
      m.set(to, m.get(from)!)
      m.delete(from)
      return true
    }
    for (const p of this.providers.values()) {
      if (p.inventories.has(from)) {
        p.inventories = ownMap(p.inventories)
        rename(p.inventories)
        this.markProvider(p, 'inventories')
      }
      if (p.usages.has(from)) rename((p.usages = ownMap(p.usages)))
    }
    for (const c of this.consumers.values()) {
      let touched = false
      for (const amounts of c.allocations.values()) touched = rename(amounts) || touched
      if (touched) this.tx.consumers.add(c.uuid)
    }
  }

  removeClass(name: string): void {
    this.shapeVersion++
    this.classes.delete(name)
    this.tx.classes.delete(name)
    this.tx.deletedClasses.add(name)
  }

  addTrait(name: string, now: number, id?: number): NamedRecord {
    this.shapeVersion++
    const rec = {id: id ?? this.nextTraitId++, name, createdAt: now, updatedAt: now}
    if (rec.id >= this.nextTraitId) this.nextTraitId = rec.id + 1
    this.traits.set(name, rec)
    if (this.changes) {
      this.changes.deletedTraits.delete(name)
      this.changes.traits.add(name)
    }
    return rec
  }

  setTopologyNode(node: TopologyNode): void {
    this.listener.topologyNode(node.uuid)
    this.topology.set(node.uuid, node)
    this.tx.deletedTopologyNodes.delete(node.uuid)
    this.tx.topologyNodes.add(node.uuid)
  }

  removeTopologyNode(uuid: string): void {
    this.listener.topologyNode(uuid)
    this.topology.delete(uuid)
    this.tx.topologyNodes.delete(uuid)
    this.tx.deletedTopologyNodes.add(uuid)
  }

  bumpTopology(): void {
    this.topologyGeneration += 1
    this.tx.topologyGeneration = true
  }

  /** Stores a group as given (a new object: groups are never changed in place). */
  setGroup(g: Group): void {
    this.groups.set(g.name, g)
    this.tx.deletedGroups.delete(g.name)
    this.tx.groups.add(g.name)
  }

  removeGroup(name: string): void {
    this.groups.delete(name)
    this.tx.groups.delete(name)
    this.tx.deletedGroups.add(name)
  }

  setMoved(m: MovedConsumer): void {
    this.moved.set(m.uuid, m)
    this.tx.moved.add(m.uuid)
  }

  removeMoved(uuid: string): void {
    if (!this.moved.delete(uuid)) return
    this.tx.moved.add(uuid)
  }

  setAggregateName(n: AggregateName): void {
    this.aggregateNames.set(n.uuid, n)
    this.tx.aggregateNames.add(n.uuid)
  }

  removeAggregateName(uuid: string): void {
    if (!this.aggregateNames.delete(uuid)) return
    this.tx.aggregateNames.add(uuid)
  }

  removeTrait(name: string): void {
    this.shapeVersion++
    this.traits.delete(name)
    this.tx.traits.delete(name)
    this.tx.deletedTraits.add(name)
  }
}

export function newProvider(uuid: string, name: string, parent: Provider | null, now: number): Provider {
  return {
    uuid,
    name,
    seq: 0,
    generation: 0,
    parent: parent ? parent.uuid : null,
    root: parent ? parent.root : uuid,
    createdAt: now,
    updatedAt: now,
    // Shared empty collections until the provider gets its own (see shared-collections.ts).
    inventories: emptyMap(),
    traits: emptySet(),
    aggregates: emptySet(),
    children: emptySet(),
    usages: emptyMap(),
    allocations: emptyMap(),
  }
}
