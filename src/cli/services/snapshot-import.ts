/**
 * `placemat import`: a snapshot written straight into a new or empty database, in one
 * transaction (all or nothing), keeping every provider and consumer generation exactly
 * (going through the API would move them). The snapshot is read item by item and written
 * in chunks of rows as it is read; what needs the whole file is checked with compact sets of
 * uuids and names. Classes and traits referenced but unknown here (a newer os-traits on the
 * exporting side) are created. placemat's own parts (racks, rows and rooms; placement groups;
 * moved consumers; hosts' disabled reasons; aggregate names) are written with the rest, and the hard groups' rules are checked where the snapshot's
 * allocations put their members before anything is committed: a snapshot that breaks them is
 * refused (exit 4) unless the import is told to allow it.
 */
import fs from 'node:fs'
import {sql} from 'kysely'
import {BulkImport, isEmpty} from '../../store/bulk-import.js'
import {openBackend} from '../../store/backends.js'
import {commitOutsideJournal} from '../../store/journal.js'
import {Store} from '../../store/store.js'
import {isDatabaseUrl} from '../../store/target.js'
import {canonicalUuid} from '../../core/uuids.js'
import {breachRecord, breachText, hardGroupBreaches} from '../../core/groups.js'
import {stateFromSnapshot} from '../../core/snapshot.js'
import {nodeUuid} from '../../core/topology.js'
import {DISABLED_TRAIT} from '../../core/host.js'
import type {TopologyLevel} from '../../core/state/state.js'
import type {MovedRecord} from '../../core/consumer-moves.js'
import {conflictError, usageError} from '../failure.js'
import {snapshotItems} from '../formats/snapshot-read.js'
import {groupOfRecord} from '../groups/groups.js'
import {maskPassword, PlacementUrlError} from '../../store/placement-db/connection.js'
import {PlacementSchemaError, readPlacement} from '../../store/placement-db/reader.js'
import type {
  SnapshotAggregateName,
  SnapshotConsumer,
  SnapshotGroup,
  SnapshotItem,
  SnapshotProvider,
  SnapshotTopology,
} from '../../core/snapshot-format.js'

export interface ImportResult {
  file: string
  resource_classes: number
  traits: number
  providers: number
  consumers: number
  allocations: number
  /** Racks, rows and rooms. */
  topology_nodes: number
  groups: number
  /** Consumers that gave their allocations away (claim move) and hold nothing. */
  moved_consumers: number
  /** Names apply files gave aggregates. */
  aggregate_names: number
  /** Hosts out of service with a reason. */
  disabled_reasons: number
}

export interface ImportOptions {
  /** Import hard placement groups even when the snapshot's allocations break their rules. */
  allowViolations?: boolean
}

/** Reads `snapshotFile` ("-" for stdin) into the database `target`; see the module comment. */
export async function importSnapshot(snapshotFile: string, target: string, opts: ImportOptions = {}): Promise<ImportResult> {
  return importItems(snapshotFile, snapshotItems(snapshotFile), target, opts)
}

/**
 * Reads a running Placement's database (`url`, as placement.conf names it) into `target`, in one
 * read-only transaction on Placement's side and one write transaction on placemat's.
 */
export async function importFromPlacement(url: string, target: string): Promise<ImportResult & {placement_schema: string}> {
  let source: Awaited<ReturnType<typeof readPlacement>>
  try {
    source = await readPlacement(url)
  } catch (err) {
    if (err instanceof PlacementSchemaError || err instanceof PlacementUrlError) throw usageError(`${maskPassword(url)}: ${err.message}`)
    throw err
  }
  try {
    const result = await importItems(maskPassword(url), source.items, target)
    return {...result, placement_schema: source.release}
  } catch (err) {
    if (err instanceof PlacementSchemaError) throw usageError(`${maskPassword(url)}: ${err.message}`)
    throw err
  }
}

/** The items of a snapshot (`label` names where they come from in messages) into `target`. */
async function importItems(
  label: string,
  items: AsyncGenerator<SnapshotItem>,
  target: string,
  opts: ImportOptions = {},
): Promise<ImportResult> {
  // Reading the first item opens the source: one that cannot be read creates no database.
  const first = await items.next()
  const created = !isDatabaseUrl(target) && !fs.existsSync(target)
  try {
    // Schema and standard classes and traits, as any store opened on the target has them.
    await (await Store.open(target, {migrate: created ? true : undefined})).close()
    return await importInto(target, label, first.done ? [] : prepend(first.value, items), opts)
  } catch (err) {
    await items.return(undefined)
    if (created) for (const f of [target, `${target}-wal`, `${target}-shm`]) fs.rmSync(f, {force: true})
    throw err
  }
}

async function* prepend<T>(first: T, rest: AsyncIterable<T>): AsyncGenerator<T> {
  yield first
  yield* rest
}

async function importInto(
  target: string,
  snapshotFile: string,
  items: AsyncIterable<SnapshotItem> | SnapshotItem[],
  opts: ImportOptions,
): Promise<ImportResult> {
  const backend = await openBackend(target, {})
  try {
    return await backend.db.connection().execute(async (conn) => {
      for (const q of backend.beginWrite()) await conn.executeQuery(q)
      try {
        const o = await BulkImport.occupancy(conn)
        if (!isEmpty(o)) {
          const own = [
            o.topologyNodes ? `, ${o.topologyNodes} racks/rows/rooms` : '',
            o.groups ? `, ${o.groups} placement groups` : '',
            o.movedConsumers ? `, ${o.movedConsumers} moved consumers` : '',
            o.aggregateNames ? `, ${o.aggregateNames} aggregate names` : '',
          ].join('')
          throw conflictError(
            `${target} is not empty (${o.providers} providers, ${o.consumers} consumers, ` +
              `${o.customClasses} custom classes, ${o.customTraits} custom traits${own}); import only into a new or empty file`,
          )
        }
        const known = await BulkImport.names(conn)
        const writer = await BulkImport.start(conn, Date.now())
        const run = new SnapshotImport(snapshotFile, target, writer, known)
        const result = await run.run(items)
        await writer.finish()
        await run.checkGroups(opts)
        await commitOutsideJournal(conn)
        return result
      } catch (err) {
        await sql`rollback`.execute(conn).catch(() => undefined)
        throw err
      }
    })
  } finally {
    await backend.close()
  }
}

/** A snapshot's racks, rows and rooms with their aggregate uuids (fixed by level and name) and their parents'. */
function nodeRecords(t: SnapshotTopology): Array<{uuid: string; name: string; level: TopologyLevel; parent: string | null}> {
  const above: Record<TopologyLevel, TopologyLevel> = {rack: 'row', row: 'room', room: 'room'}
  return t.nodes.map((n) => ({
    uuid: nodeUuid(n.level, n.name),
    name: n.name,
    level: n.level,
    parent: n.parent === null ? null : nodeUuid(above[n.level], n.parent),
  }))
}

/**
 * The checks across items, and the order rows are written in: a provider is written once its
 * parent is (a child read before its parent waits for it), so every provider row knows its root.
 */
class SnapshotImport {
  /** Every provider written, with its root's uuid. */
  private readonly roots = new Map<string, string>()
  private readonly names = new Set<string>()
  /** Providers read before their parent, by the parent's uuid. */
  private readonly waiting = new Map<string, SnapshotProvider[]>()
  private readonly waitingUuids = new Set<string>()
  private readonly consumers = new Set<string>()
  /** Allocations on providers not read yet when their consumer was: checked at the end. */
  private readonly laterProviders: Array<{consumer: string; provider: string}> = []
  private topology: SnapshotTopology | undefined
  private readonly groups: SnapshotGroup[] = []
  private readonly movedUuids = new Set<string>()
  /** Aggregate names given, and the aggregates they name. */
  private readonly aggregateNames = new Set<string>()
  private readonly namedAggregates = new Set<string>()
  private readonly result: ImportResult

  constructor(
    private readonly file: string,
    target: string,
    private readonly writer: BulkImport,
    private readonly known: {classes: Set<string>; traits: Set<string>},
  ) {
    this.result = {
      file: target,
      resource_classes: 0,
      traits: 0,
      providers: 0,
      consumers: 0,
      allocations: 0,
      topology_nodes: 0,
      groups: 0,
      moved_consumers: 0,
      aggregate_names: 0,
      disabled_reasons: 0,
    }
  }

  private usage(msg: string): Error {
    return usageError(`${this.file}: ${msg}`)
  }

  async run(items: AsyncIterable<SnapshotItem> | SnapshotItem[]): Promise<ImportResult> {
    for await (const item of items) {
      switch (item.kind) {
        case 'resource_class':
          this.result.resource_classes++
          await this.ensureClass(item.name)
          break
        case 'trait':
          this.result.traits++
          await this.ensureTrait(item.name)
          break
        case 'provider':
          await this.provider(item.provider)
          break
        case 'consumer':
          await this.consumer(item.consumer)
          break
        case 'topology':
          await this.topologyNodes(item.topology)
          break
        case 'group':
          await this.group(item.group)
          break
        case 'moved':
          await this.moved(item.moved)
          break
        case 'aggregate_name':
          await this.aggregateName(item.name)
          break
      }
    }
    this.checkWaiting()
    for (const {consumer, provider} of this.laterProviders) {
      if (!this.roots.has(provider)) throw this.usage(`consumer ${consumer} has allocations on ${provider}, which is not in the snapshot`)
    }
    for (const uuid of this.movedUuids) {
      if (this.consumers.has(uuid)) throw this.usage(`consumer ${uuid} is both a consumer and a moved consumer (one that holds nothing)`)
    }
    return this.result
  }

  private async ensureClass(name: string): Promise<void> {
    if (this.known.classes.has(name)) return
    this.known.classes.add(name)
    await this.writer.addClass(name)
  }

  private async ensureTrait(name: string): Promise<void> {
    if (this.known.traits.has(name)) return
    this.known.traits.add(name)
    await this.writer.addTrait(name)
  }

  private async provider(p: SnapshotProvider): Promise<void> {
    if (this.roots.has(p.uuid) || this.waitingUuids.has(p.uuid)) throw this.usage(`provider ${p.uuid} appears twice`)
    if (this.names.has(p.name)) throw this.usage(`provider name ${p.name} appears twice`)
    this.names.add(p.name)
    const parent = p.parent_provider_uuid
    // A reason goes with the trait that takes a host out of service, as placemat keeps it.
    if (p.disabled_reason !== undefined && (parent !== null || !p.traits.includes(DISABLED_TRAIT))) {
      throw this.usage(`provider ${p.uuid}: disabled_reason is for a host (a root provider) with ${DISABLED_TRAIT}`)
    }
    if (parent !== null && !this.roots.has(parent)) {
      const list = this.waiting.get(parent)
      if (list) list.push(p)
      else this.waiting.set(parent, [p])
      this.waitingUuids.add(p.uuid)
      return
    }
    // This provider, then every provider that waited for it (and for those), parents first.
    const ready = [p]
    while (ready.length) {
      const next = ready.pop()!
      await this.write(next)
      const children = this.waiting.get(next.uuid)
      if (children) {
        this.waiting.delete(next.uuid)
        for (const c of children) this.waitingUuids.delete(c.uuid)
        ready.push(...children)
      }
    }
  }

  private async write(p: SnapshotProvider): Promise<void> {
    for (const rc of Object.keys(p.inventories)) await this.ensureClass(rc)
    for (const t of p.traits) await this.ensureTrait(t)
    const parent = p.parent_provider_uuid
    const root = parent === null ? p.uuid : this.roots.get(parent)!
    this.roots.set(p.uuid, root)
    this.result.providers++
    // Aggregate ids in the one form placemat keeps and matches (Placement on SQLite keeps them as sent).
    const aggregates = [...new Set(p.aggregates.map(canonicalUuid))]
    if (p.disabled_reason !== undefined) this.result.disabled_reasons++
    await this.writer.addProvider(
      {
        uuid: p.uuid,
        name: p.name,
        generation: p.generation,
        parent_uuid: parent,
        root_uuid: root,
        disabled_reason: p.disabled_reason ?? null,
      },
      p.inventories,
      p.traits,
      aggregates,
    )
  }

  /** Providers still waiting had a parent that never came, or parents that wait on each other. */
  private checkWaiting(): void {
    for (const [parent, children] of this.waiting) {
      if (!this.waitingUuids.has(parent)) {
        throw this.usage(`provider ${children[0].uuid} has parent ${parent}, which is not in the snapshot`)
      }
    }
    if (this.waiting.size) throw this.usage('the provider parents form a loop')
  }

  private async consumer(c: SnapshotConsumer): Promise<void> {
    if (this.consumers.has(c.uuid)) throw this.usage(`consumer ${c.uuid} appears twice`)
    this.consumers.add(c.uuid)
    for (const [rp, amounts] of Object.entries(c.allocations)) {
      if (!this.roots.has(rp)) this.laterProviders.push({consumer: c.uuid, provider: rp})
      for (const rc of Object.keys(amounts)) await this.ensureClass(rc)
      this.result.allocations += Object.keys(amounts).length
    }
    this.result.consumers++
    await this.writer.addConsumer(
      {uuid: c.uuid, project_id: c.project_id, user_id: c.user_id, consumer_type: c.consumer_type, generation: c.generation},
      c.allocations,
    )
  }

  private async topologyNodes(t: SnapshotTopology): Promise<void> {
    if (this.topology) throw this.usage('topology appears twice')
    this.topology = t
    for (const n of nodeRecords(t)) {
      await this.writer.addTopologyNode({uuid: n.uuid, name: n.name, level: n.level, parent_uuid: n.parent})
      this.result.topology_nodes++
    }
    this.writer.setTopologyGeneration(t.generation)
  }

  private async group(g: SnapshotGroup): Promise<void> {
    if (this.groups.some((x) => x.name === g.name)) throw this.usage(`group ${g.name} appears twice`)
    this.groups.push(g)
    this.result.groups++
    await this.writer.addGroup(
      {
        name: g.name,
        policy: g.policy,
        level: g.level,
        max_per: g.max_per ?? null,
        max_skew: g.max_skew ?? null,
        soft: g.soft,
        generation: g.generation,
        created_at: Date.parse(g.created_at),
        updated_at: Date.parse(g.updated_at),
      },
      g.members,
    )
  }

  private async moved(m: MovedRecord): Promise<void> {
    if (this.movedUuids.has(m.uuid)) throw this.usage(`moved consumer ${m.uuid} appears twice`)
    this.movedUuids.add(m.uuid)
    this.result.moved_consumers++
    await this.writer.addMoved({
      uuid: m.uuid,
      moved_to: m.moved_to,
      project_id: m.project_id,
      user_id: m.user_id,
      consumer_type: m.consumer_type,
      moved_at: Date.parse(m.moved_at),
    })
  }

  private async aggregateName(n: SnapshotAggregateName): Promise<void> {
    if (this.aggregateNames.has(n.name)) throw this.usage(`aggregate name ${n.name} appears twice`)
    if (this.namedAggregates.has(n.uuid)) throw this.usage(`aggregate ${n.uuid} is named twice`)
    this.aggregateNames.add(n.name)
    this.namedAggregates.add(n.uuid)
    this.result.aggregate_names++
    await this.writer.addAggregateName(n.uuid, n.name)
  }

  /**
   * Refuses (exit 4) hard groups whose rules the snapshot's allocations break, judged by the
   * core on a State of what the rules look at: the members' provider trees (traits included: a shared provider is no host), the racks, rows and rooms,
   * and for a spread by host every host, as written in this transaction (call after finish()).
   */
  async checkGroups(opts: ImportOptions): Promise<void> {
    const hard = this.groups.filter((g) => !g.soft && g.members.length > 0)
    if (hard.length === 0 || opts.allowViolations) return
    const placed = await this.writer.allocationProviders([...new Set(hard.flatMap((g) => g.members))])
    const memberRoots = new Set([...placed.values()].flat().map((rp) => this.roots.get(rp) ?? rp))
    // The members' providers in their whole trees, with their traits: a provider that shares
    // (and a tree it roots) is no host, as the core decides anywhere else.
    const trees = await this.writer.trees(
      [...memberRoots],
      hard.some((g) => g.policy === 'spread' && g.level === 'host'),
    )
    const s = stateFromSnapshot({
      providers: trees.map((p) => ({
        uuid: p.uuid,
        name: p.name,
        generation: 0,
        parent_provider_uuid: p.parent_uuid,
        root_provider_uuid: p.root_uuid,
        inventories: p.inventories,
        traits: p.traits,
        aggregates: p.aggregates,
      })),
      // A member's allocations as the providers they are on: all a rule looks at.
      consumers: [...placed].map(([uuid, rps]) => ({uuid, allocations: Object.fromEntries(rps.map((rp) => [rp, {resources: {}}]))})),
      topology: this.topology ? nodeRecords(this.topology) : [],
    })
    // The snapshot's rules were checked as they were read (formats/snapshot-read.ts).
    for (const g of hard) s.groups.set(g.name, groupOfRecord(g))
    const breaches = hardGroupBreaches(s)
    if (breaches.length) {
      throw conflictError(
        `${this.file}: the snapshot's allocations break placement group rules: ${breaches.map((b) => breachText(breachRecord(b))).join('; ')}; ` +
          'nothing imported (--allow-violations imports the groups as they are, and placemat audit reports them)',
      )
    }
  }
}
