/**
 * Draws a picture (model.ts) as nested boxes, each an element carrying data-level, data-name and
 * data-fit (data-used and data-capacity when coloured by a class; data-before after a what-if), its
 * value as text and what a screen reader says of it. A picture of the same layout is drawn over
 * the boxes already there (only what changed is written), so a refresh of 10,000 hosts writes
 * numbers, not a new page. Arrows (moves.ts) are drawn over the boxes.
 */
import {h, num} from './dom.js'
import {strandedText, type Box, type Picture} from './model.js'
import type {Move} from './moves.js'

/** Hosts above which the boxes are drawn small (the host's name is in its label and the details). */
const COMPACT_ABOVE = 300

/** What was last written to a box's element, to write only what changed. */
interface Written {
  className: string
  label: string
  shown: string
  sub: string
  data: string
}

export class MapView {
  readonly element: HTMLElement
  private readonly map: HTMLElement
  private readonly svg: SVGSVGElement
  private elements = new Map<string, HTMLElement>()
  /** Each box's value and, but for hosts, the line under its name. */
  private parts = new Map<string, {value: Element; sub: Element | null}>()
  private written = new Map<string, Written>()
  private drawnShape: string | null = null

  constructor(side: 'now' | 'before' | 'after', title: string | null) {
    this.map = h('div', {class: 'map', role: 'tree', 'aria-label': title ?? 'the datacenter'})
    this.svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg')
    this.svg.setAttribute('class', 'arrows')
    this.svg.setAttribute('aria-hidden', 'true')
    this.element = h('section', {class: 'side', 'data-side': side}, title ? h('h2', {}, title) : null, this.map)
    this.element.append(this.svg)
  }

  /** The element of a box, by its key. */
  elementOf(key: string): HTMLElement | undefined {
    return this.elements.get(key)
  }

  /**
   * Draws `p`: anew when the layout's `shape` (its hosts, racks, rows and rooms) is another than
   * the one drawn, else over the boxes there, writing only what changed.
   */
  draw(p: Picture, shape: string, selected: string | null): void {
    if (shape !== this.drawnShape || !this.elements.has(p.root.key)) {
      this.elements = new Map()
      this.parts = new Map()
      this.written = new Map()
      const compact = p.root.hostCount > COMPACT_ABOVE
      const host = h(
        'div',
        {role: 'treeitem', tabindex: -1, 'data-level': 'host'},
        compact ? null : h('span', {class: 'name'}),
        h('span', {class: 'value'}),
      )
      const root = this.build(p.root, 1, host, compact)
      this.map.classList.toggle('compact', compact)
      this.map.replaceChildren(root)
      this.drawnShape = shape
    }
    for (const [key, el] of this.elements) {
      const b = p.byKey.get(key)
      if (b) this.write(b, el, p, key === selected)
    }
  }

  /** A box's element and those of what it holds; hosts are copies of `host` (in a compact map, without their name: it is in their label). */
  private build(b: Box, depth: number, host: HTMLElement, compact: boolean): HTMLElement {
    let el: HTMLElement
    if (b.level === 'host') {
      el = host.cloneNode(true) as HTMLElement
      el.dataset.key = b.key
      el.dataset.name = b.name
      el.setAttribute('aria-level', String(depth))
      if (!compact) el.firstElementChild!.textContent = b.name
      this.parts.set(b.key, {value: el.lastElementChild!, sub: null})
    } else {
      el = h('div', {role: 'treeitem', 'aria-level': depth, tabindex: -1, 'data-key': b.key, 'data-level': b.level, 'data-name': b.name})
      const title = b.level === 'unracked' ? 'hosts in no rack' : b.level === 'cloud' ? 'cloud' : `${b.level} ${b.name}`
      const value = h('span', {class: 'value'})
      const sub = h('span', {class: 'sub'})
      el.append(h('div', {class: 'head'}, h('span', {class: 'name'}, title), value, sub))
      const kids = h('div', {class: 'kids', role: 'group'})
      for (const c of b.children) kids.append(this.build(c, depth + 1, host, compact))
      el.append(kids)
      this.parts.set(b.key, {value, sub})
    }
    this.elements.set(b.key, el)
    return el
  }

  private write(b: Box, el: HTMLElement, p: Picture, selected: boolean): void {
    const was = this.written.get(b.key)
    let className = `box lvl-${b.level} tone-${b.tone}`
    if (b.disabled) className += ' disabled'
    if (b.stranded && Object.keys(b.stranded).length) className += ' mark-stranded'
    if (selected) className += ' selected'
    const data = dataOf(b, p)
    const sub = b.level === 'host' ? '' : subOf(b, p)
    if (was?.className !== className) el.className = className
    if (was?.label !== b.label) el.setAttribute('aria-label', b.label)
    if (was?.data !== data.key)
      for (const k in data.values) {
        const v = data.values[k]
        if (v !== undefined) el.dataset[k] = v
        else if (was) delete el.dataset[k]
      }
    const parts = this.parts.get(b.key)!
    if (was?.shown !== b.shown) parts.value.textContent = b.shown
    if (parts.sub && was?.sub !== sub) parts.sub.textContent = sub
    this.written.set(b.key, {className, label: b.label, shown: b.shown, sub, data: data.key})
  }

  /** Arrows from host to host over this side's boxes (none: cleared). */
  drawArrows(moves: readonly Move[]): void {
    const svg = this.svg
    svg.replaceChildren()
    if (!moves.length) return
    const base = this.element.getBoundingClientRect()
    svg.setAttribute('width', String(this.element.scrollWidth))
    svg.setAttribute('height', String(this.element.scrollHeight))
    const ns = 'http://www.w3.org/2000/svg'
    const defs = document.createElementNS(ns, 'defs')
    const marker = document.createElementNS(ns, 'marker')
    for (const [k, v] of Object.entries({
      id: 'head',
      viewBox: '0 0 10 10',
      refX: '9',
      refY: '5',
      markerWidth: '6',
      markerHeight: '6',
      orient: 'auto',
    }))
      marker.setAttribute(k, v)
    const tip = document.createElementNS(ns, 'path')
    tip.setAttribute('d', 'M0,0 L10,5 L0,10 z')
    marker.append(tip)
    defs.append(marker)
    svg.append(defs)
    const centre = (key: string) => {
      const r = this.elements.get(key)?.getBoundingClientRect()
      return r && {x: r.left - base.left + r.width / 2, y: r.top - base.top + r.height / 2}
    }
    for (const m of moves) {
      const a = centre(`host:${m.from}`)
      const b = centre(`host:${m.to}`)
      if (!a || !b) continue
      const width = Math.min(6, 1.5 + Math.log2(m.count))
      for (const halo of [true, false]) {
        const line = document.createElementNS(ns, 'line')
        for (const [k, v] of Object.entries({x1: a.x, y1: a.y, x2: b.x, y2: b.y})) line.setAttribute(k, v.toFixed(1))
        line.setAttribute('stroke-width', String(halo ? width + 2 : width))
        if (halo) line.setAttribute('class', 'halo')
        else line.setAttribute('marker-end', 'url(#head)')
        line.dataset.from = m.from
        line.dataset.to = m.to
        line.dataset.count = String(m.count)
        svg.append(line)
      }
    }
  }
}

/** The data attributes of a box, and one string of them to tell whether they changed. */
function dataOf(b: Box, p: Picture): {values: Record<string, string | undefined>; key: string} {
  const values: Record<string, string | undefined> = {
    fit: b.fit === null || b.level === 'unracked' ? undefined : String(b.fit),
    before: b.before === null ? undefined : String(b.before),
    used: p.cls && b.used !== null ? String(b.used) : undefined,
    capacity: p.cls && b.capacity !== null ? String(b.capacity) : undefined,
    lost: b.lost ? 'true' : undefined,
    disabled: b.level === 'host' ? String(b.disabled) : undefined,
    stranded: Object.keys(b.stranded).length ? strandedText(b.stranded) : undefined,
    tone: b.tone,
  }
  let key = ''
  for (const k in values) key += `${values[k] ?? ''}\u0000`
  return {values, key}
}

/** The line under a domain's name: what else it counts. */
function subOf(b: Box, p: Picture): string {
  const parts: string[] = []
  if (b.lost) return ''
  if (p.mode === 'use' && b.capacity !== null) parts.push(`${num(b.used ?? 0)} of ${num(b.capacity)} ${p.cls}`)
  if (p.flavor && b.fit !== null) {
    if (p.mode === 'use') parts.push(`fit ${b.fit}`)
    if (b.before !== null && b.before !== b.fit) parts.push(`was ${b.before}`)
    parts.push(`pooled ${b.pooled}`, `loss ${b.loss}`)
    if (b.binding) parts.push(b.binding)
  }
  if (b.level === 'unracked' || b.level === 'rack') parts.push(b.hostCount === 1 ? '1 host' : `${num(b.hostCount)} hosts`)
  if (b.disabledCount) parts.push(`${b.disabledCount} disabled`)
  const stranded = strandedText(b.stranded)
  if (stranded) parts.push(`stranded ${stranded}`)
  return parts.join(' · ')
}

/** The legend of a picture's tones and marks. */
export function legend(p: Picture): HTMLElement[] {
  const swatch = (tone: string, text: string, extra = '') =>
    h('span', {}, h('span', {class: `box lvl-host tone-${tone} ${extra}`.trim()}, text), ' ')
  const out: HTMLElement[] = []
  if (p.mode === 'fit') {
    out.push(
      h('span', {}, `fit of ${p.flavor ?? '(no flavor)'}: `),
      swatch('fit-0', '0'),
      swatch('fit-1', '≤25%'),
      swatch('fit-2', '≤50%'),
      swatch('fit-3', '≤75%'),
      swatch('fit-4', 'most'),
      h('span', {}, '(of the largest fit of the level)'),
    )
  } else {
    out.push(
      h('span', {}, `use of ${p.cls}: `),
      swatch('use-0', '<25%'),
      swatch('use-1', '<50%'),
      swatch('use-2', '<75%'),
      swatch('use-3', '<90%'),
      swatch('use-4', '≥90%'),
    )
  }
  out.push(
    swatch('none', 'none held'),
    swatch('none', 'disabled', 'disabled'),
    swatch('none', 'stranded', 'mark-stranded'),
    swatch('lost', 'lost'),
  )
  return out
}
