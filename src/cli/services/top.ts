/**
 * `placemat top`: frames of what the cloud holds and uses. Each frame has capacity and
 * usage per resource class, the fullest providers, and recent claims: consumers whose
 * allocations appeared, changed or went away between frames (seeded, on the first frame,
 * with the most recently updated consumers where the endpoint tells their times); with a
 * flavor, each rack's fit for it.
 */
import {capacityOf} from '../../core/inventory-capacity.js'
import type {FlavorRequest} from '../../core/headroom/flavors.js'
import {headroom} from '../../core/headroom/headroom.js'
import type {State, TopologyNode} from '../../core/state/state.js'
import {compareResourceClasses} from '../../core/listing-order.js'
import type {ConsumerRecord as ConsumerState} from '../../core/wire.js'
import {loadState, type Backend} from '../backend/backend.js'
import {disabledProviders} from '../backend/standard-reads.js'
import type {Claim, ClassRow, Frame, FullRow, RackFit} from '../render/top-frame.js'

const signature = (c: ConsumerState) =>
  JSON.stringify(
    Object.keys(c.allocations)
      .sort()
      .map((rp) => [rp, Object.entries(c.allocations[rp].resources).sort(([a], [b]) => (a < b ? -1 : 1))]),
  )

const totals = (c: ConsumerState): Record<string, number> => {
  const out: Record<string, number> = {}
  for (const a of Object.values(c.allocations)) for (const [rc, n] of Object.entries(a.resources)) out[rc] = (out[rc] ?? 0) + n
  return out
}

export interface TopOptions {
  /** Rows of fullest providers and of claims. */
  limit?: number
  concurrency?: number
  /** A flavor whose fit per rack the frame shows (core/headroom/headroom.ts). */
  flavor?: FlavorRequest
}

/** Each rack's fit for `flavor`, with its row and room, fullest first. */
export function rackFits(s: State, flavor: FlavorRequest): RackFit[] {
  const byName = new Map<string, TopologyNode>()
  for (const n of s.topology.values()) byName.set(`${n.level} ${n.name}`, n)
  const parentOf = (n: TopologyNode | undefined) => (n?.parent ? s.topology.get(n.parent) : undefined)
  const racks = headroom(s, [flavor], {levels: ['rack']}).domains.map((d): RackFit => {
    const row = parentOf(byName.get(`rack ${d.name}`))
    return {room: parentOf(row)?.name ?? null, row: row?.name ?? null, rack: d.name, fit: d.fit, pooled: d.pooled}
  })
  return racks.sort(
    (a, b) =>
      a.fit - b.fit ||
      (a.room ?? '').localeCompare(b.room ?? '') ||
      (a.row ?? '').localeCompare(b.row ?? '') ||
      a.rack.localeCompare(b.rack),
  )
}

/** Makes frames; keeps what it needs of the previous one to see changes. */
export class TopModel {
  private previous?: Map<string, {sig: string; consumer: ConsumerState}>
  private recent: Claim[] = []
  private readonly limit: number

  constructor(
    private readonly backend: Backend,
    private readonly opts: TopOptions = {},
  ) {
    this.limit = opts.limit ?? 10
  }

  async frame(): Promise<Frame> {
    const [view, disabled] = await Promise.all([
      this.backend.loadCloud({
        consumers: true,
        parts: {traits: false, aggregates: false},
        concurrency: this.opts.concurrency,
      }),
      // One call, rather than every provider's traits on plain Placement.
      disabledProviders(this.backend.client),
    ])
    const hostDisabled = (p: {uuid: string; root_provider_uuid: string}) => disabled.has(p.root_provider_uuid ?? p.uuid)
    const now = new Date()
    const names = (rps: string[]) => rps.map((rp) => view.providers.get(rp)?.name ?? rp)

    const classes = new Map<string, ClassRow>()
    const fullest: FullRow[] = []
    for (const p of view.providers.values()) {
      let top: FullRow | undefined
      for (const [rc, inv] of Object.entries(p.inventories)) {
        const cap = capacityOf(inv)
        const used = p.usages[rc] ?? 0
        let row = classes.get(rc)
        if (!row) classes.set(rc, (row = {resource_class: rc, used: 0, capacity: 0, providers: 0}))
        row.used += used
        row.capacity += cap
        row.providers++
        const ratio = cap > 0 ? used / cap : used > 0 ? Infinity : 0
        if (used > 0 && (!top || ratio > top.ratio))
          top = {uuid: p.uuid, name: p.name, resource_class: rc, used, capacity: cap, ratio, disabled: hostDisabled(p)}
      }
      if (top) fullest.push(top)
    }
    fullest.sort((a, b) => b.ratio - a.ratio || b.used - a.used || (a.name < b.name ? -1 : 1))

    const current = new Map<string, {sig: string; consumer: ConsumerState}>()
    for (const c of view.consumers?.values() ?? []) {
      if (Object.keys(c.allocations).length) current.set(c.uuid, {sig: signature(c), consumer: c})
    }
    if (!this.previous) {
      // First frame: the most recently updated consumers, when the endpoint says when.
      const dated = [...current.values()].filter((x) => x.consumer.updated_at)
      dated.sort((a, b) => (a.consumer.updated_at! < b.consumer.updated_at! ? 1 : -1))
      this.recent = dated.slice(0, this.limit).map(({consumer: c}) => ({
        consumer: c.uuid,
        change: 'recent' as const,
        resources: totals(c),
        providers: names(Object.keys(c.allocations)),
        at: c.updated_at!,
      }))
    } else {
      const seen: Claim[] = []
      const at = now.toISOString()
      for (const [uuid, x] of current) {
        const before = this.previous.get(uuid)
        if (!before || before.sig !== x.sig) {
          seen.push({
            consumer: uuid,
            change: before ? 'changed' : 'new',
            resources: totals(x.consumer),
            providers: names(Object.keys(x.consumer.allocations)),
            at,
          })
        }
      }
      for (const [uuid, x] of this.previous) {
        if (!current.has(uuid)) {
          seen.push({
            consumer: uuid,
            change: 'removed',
            resources: totals(x.consumer),
            providers: names(Object.keys(x.consumer.allocations)),
            at,
          })
        }
      }
      this.recent = [...seen, ...this.recent.filter((r) => !seen.some((s) => s.consumer === r.consumer))].slice(0, this.limit)
    }
    this.previous = current
    const flavor = this.opts.flavor
    const capacity = flavor
      ? {flavor: flavor.flavor, racks: rackFits(await loadState(this.backend), flavor).slice(0, this.limit)}
      : undefined

    return {
      at: now.toISOString(),
      endpoint: this.backend.client.transport.description,
      transport: this.backend.kind,
      providers: view.providers.size,
      consumers: current.size,
      disabled_hosts: [...view.providers.values()]
        .filter((p) => disabled.has(p.uuid))
        .map((p) => p.name)
        .sort(),
      classes: [...classes.values()].sort((a, b) => compareResourceClasses(a.resource_class, b.resource_class)),
      fullest: fullest.slice(0, this.limit),
      claims: this.recent,
      ...(capacity ? {capacity} : {}),
    }
  }
}
