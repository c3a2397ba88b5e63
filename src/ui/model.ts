/**
 * The picture's model: the daemon's answers (the layout, one view's values) turned into nested
 * boxes, the cloud holding rooms, rows, racks and hosts (the hosts in no rack in a group of their
 * own), each with the numbers it shows, its text, its tone (the colour class the stylesheet
 * draws) and what a screen reader says of it. Pure: no DOM, unit-tested
 * (test/unit/map-model.test.ts); render.ts draws what this returns.
 */
import type {MapLayoutAnswer, MapNode} from '../core/map/map-layout.js'
import type {LevelValues, MapNumbers} from '../core/map/map-values.js'
import type {Level} from './view.js'

export type BoxLevel = Level | 'unracked'

export interface Box {
  /** `LEVEL:NAME`, unique in one picture. */
  key: string
  level: BoxLevel
  name: string
  children: Box[]
  /** Hosts under it (itself, for a host). */
  hostCount: number
  /** Its hosts out of service (itself, for a host). */
  disabledCount: number
  /** A host out of service. */
  disabled: boolean
  /** After a what-if: every host under it is gone. */
  lost: boolean
  /** With a flavor: capacity's numbers of the domain (null for the group of hosts in no rack). */
  fit: number | null
  pooled: number | null
  loss: number | null
  disabledFit: number | null
  binding: string | null
  /** After a what-if: the fit before it. */
  before: number | null
  /** With a class: what its hosts hold of it and use. */
  capacity: number | null
  used: number | null
  /** Free capacity stranded on its hosts (no flavor of the catalog fits there), per class. */
  stranded: Record<string, number>
  /** The value written in the box. */
  shown: string
  /** The colour class: fit-0 (nothing fits) to fit-4, use-0 to use-4 (full), none, lost. */
  tone: string
  /** What a screen reader says of it. */
  label: string
}

export interface Picture {
  root: Box
  byKey: Map<string, Box>
  /** Each box's parent, by the box's key (the cloud has none). */
  parentOf: Map<string, Box>
  mode: 'fit' | 'use'
  flavor: string | null
  cls: string | null
}

/** The largest fit of each level: what a box's tone is measured against (before a what-if, for both sides). */
export type Scale = Record<string, number>

export interface PictureOptions {
  flavor: string | null
  cls: string | null
  /** The side after a what-if: hosts missing from its numbers are lost; `before` gives each box's fit before. */
  before?: MapNumbers
  /** Tones measured against another side's largest fits. */
  scale?: Scale
}

/** A level's numbers by domain name. */
class LevelIndex {
  private readonly at: Map<string, number>
  constructor(readonly values: LevelValues | undefined) {
    this.at = new Map((values?.names ?? []).map((n, i) => [n, i]))
  }
  /** The domain's row (-1: none). */
  row(name: string): number {
    return this.at.get(name) ?? -1
  }
  /** A column's number in a row (null: no such row or column). */
  get(row: number, column: keyof Omit<LevelValues, 'names'>): number | null {
    const col = this.values?.[column]
    return row < 0 || !col ? null : col[row]
  }
}

const LEVELS = ['host', 'rack', 'row', 'room', 'cloud'] as const

/** The tone of a fit against the largest of its level. */
export function fitTone(fit: number | null, most: number): string {
  if (fit === null) return 'none'
  if (fit <= 0) return 'fit-0'
  const r = most > 0 ? fit / most : 1
  return r <= 0.25 ? 'fit-1' : r <= 0.5 ? 'fit-2' : r <= 0.75 ? 'fit-3' : 'fit-4'
}

/** The tone of a use: under a quarter, half, three quarters, nine tenths, or more. */
export function usageTone(used: number | null, capacity: number | null): string {
  if (used === null || capacity === null || capacity <= 0) return 'none'
  const r = used / capacity
  return r < 0.25 ? 'use-0' : r < 0.5 ? 'use-1' : r < 0.75 ? 'use-2' : r < 0.9 ? 'use-3' : 'use-4'
}

/** A use as the box writes it. */
export const percent = (used: number, capacity: number): string => (capacity > 0 ? `${Math.round((100 * used) / capacity)}%` : '—')

/** The largest fit of each level in `numbers`. */
export function scaleOf(numbers: MapNumbers): Scale {
  const out: Scale = {}
  for (const level of LEVELS) {
    let most = 0
    for (const f of numbers.levels[level]?.fit ?? []) if (f > most) most = f
    out[level] = most
  }
  return out
}

/** Each host's stranded amounts, by class. */
function strandedByHost(numbers: MapNumbers): Map<string, Record<string, number>> {
  const out = new Map<string, Record<string, number>>()
  for (const s of numbers.stranded) {
    let r = out.get(s.host)
    if (!r) out.set(s.host, (r = {}))
    r[s.class] = (r[s.class] ?? 0) + s.amount
  }
  return out
}

/** The picture of `numbers` over `layout` (see the module's comment). */
export function picture(layout: MapLayoutAnswer, numbers: MapNumbers, opts: PictureOptions): Picture {
  const mode = opts.cls ? 'use' : 'fit'
  const scale = opts.scale ?? scaleOf(numbers)
  const index = Object.fromEntries(LEVELS.map((l) => [l, new LevelIndex(numbers.levels[l])])) as Record<Level, LevelIndex>
  const before = opts.before
    ? (Object.fromEntries(LEVELS.map((l) => [l, new LevelIndex(opts.before!.levels[l])])) as Record<Level, LevelIndex>)
    : null
  const stranded = strandedByHost(numbers)
  const disabled = new Set(layout.disabled)
  const byKey = new Map<string, Box>()
  const parentOf = new Map<string, Box>()

  /** A box of its children's sums, or a host's (`host`: whether it is disabled, what is stranded on it). */
  const box = (level: BoxLevel, name: string, children: Box[], host?: {disabled: boolean; stranded?: Record<string, number>}): Box => {
    const b: Box = {
      key: `${level}:${name}`,
      level,
      name,
      children,
      hostCount: host ? 1 : 0,
      disabledCount: host?.disabled ? 1 : 0,
      disabled: host?.disabled ?? false,
      lost: false,
      fit: null,
      pooled: null,
      loss: null,
      disabledFit: null,
      binding: null,
      before: null,
      capacity: null,
      used: null,
      stranded: host?.stranded ? {...host.stranded} : {},
      shown: '',
      tone: 'none',
      label: '',
    }
    for (const c of children) {
      parentOf.set(c.key, b)
      b.hostCount += c.hostCount
      b.disabledCount += c.disabledCount
      for (const rc in c.stranded) b.stranded[rc] = (b.stranded[rc] ?? 0) + c.stranded[rc]
    }
    b.lost = children.length > 0 && children.every((c) => c.lost)
    if (level !== 'unracked') {
      const at = index[level]
      const row = at.row(name)
      if (level === 'host') b.lost = before !== null && row < 0
      if (opts.flavor) {
        b.fit = b.lost ? 0 : (at.get(row, 'fit') ?? 0)
        b.pooled = at.get(row, 'pooled') ?? 0
        b.loss = at.get(row, 'fragmentation_loss') ?? 0
        b.disabledFit = at.get(row, 'disabled_fit') ?? 0
        const binding = at.get(row, 'binding')
        b.binding = binding === null || binding < 0 ? null : (numbers.bindings[binding] ?? null)
        if (before) b.before = before[level].get(before[level].row(name), 'fit') ?? 0
      }
      if (opts.cls) {
        b.capacity = at.get(row, 'capacity') ?? 0
        b.used = at.get(row, 'used') ?? 0
      }
    }
    // A rack, row or room without hosts holds nothing: no tone.
    const empty = level !== 'host' && b.hostCount === 0
    b.tone = b.lost ? 'lost' : empty ? 'none' : mode === 'use' ? usageTone(b.used, b.capacity) : fitTone(b.fit, scale[level] ?? 0)
    b.shown = shownOf(b, mode)
    b.label = labelOf(b, opts)
    byKey.set(b.key, b)
    return b
  }

  const host = (i: number): Box => box('host', layout.hosts[i], [], {disabled: disabled.has(i), stranded: stranded.get(layout.hosts[i])})
  const node = (n: MapNode): Box => box(n.level, n.name, n.hosts ? n.hosts.map(host) : (n.children ?? []).map(node))
  const tops = layout.tree.map(node)
  if (layout.unracked.length) tops.push(box('unracked', 'no rack', layout.unracked.map(host)))
  const root = box('cloud', 'cloud', tops)
  return {root, byKey, parentOf, mode, flavor: opts.flavor, cls: opts.cls}
}

function shownOf(b: Box, mode: 'fit' | 'use'): string {
  if (b.lost) return 'lost'
  if (mode === 'use') return b.capacity === null ? '' : percent(b.used ?? 0, b.capacity)
  return b.fit === null ? '' : String(b.fit)
}

/** Stranded amounts as words: `12 VCPU, 30 GiB RAM`. */
export function strandedText(stranded: Record<string, number>): string {
  return Object.entries(stranded)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([rc, n]) => (rc === 'MEMORY_MB' ? `${Math.round(n / 1024)} GiB RAM` : `${n} ${rc}`))
    .join(', ')
}

function labelOf(b: Box, opts: PictureOptions): string {
  const parts = [b.level === 'unracked' ? `hosts in no rack (${b.hostCount})` : `${b.level} ${b.name}`]
  if (b.lost) parts.push('lost in the what-if')
  if (b.disabled) parts.push('disabled')
  if (opts.flavor && b.fit !== null) {
    parts.push(`fit ${b.fit} ${opts.flavor}${b.before !== null ? ` (before ${b.before})` : ''}`)
    if (b.level !== 'host') parts.push(`pooled ${b.pooled}, loss ${b.loss}`)
    if (b.binding) parts.push(`binding ${b.binding}`)
  }
  if (opts.cls && b.capacity !== null) parts.push(`${opts.cls} used ${b.used} of ${b.capacity}`)
  const s = strandedText(b.stranded)
  if (s) parts.push(`stranded ${s}`)
  if (b.level !== 'host' && b.disabledCount) parts.push(`${b.disabledCount} disabled`)
  return parts.join('; ')
}

/** The boxes in the order a reader goes through them: each box, then what it holds. */
export function inOrder(root: Box): Box[] {
  const out: Box[] = []
  const walk = (b: Box) => {
    out.push(b)
    for (const c of b.children) walk(c)
  }
  walk(root)
  return out
}
