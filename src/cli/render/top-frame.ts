/**
 * One frame of `placemat top` as it is drawn: what it holds (services/top.ts makes it), and the
 * frame as plain text; the live view (components/Top.tsx) draws the same with ink.
 */

export interface ClassRow {
  resource_class: string
  used: number
  capacity: number
  /** Providers with an inventory of this class. */
  providers: number
}

export interface FullRow {
  uuid: string
  name: string
  resource_class: string
  used: number
  capacity: number
  /** used / capacity (may exceed 1). */
  ratio: number
  /** Its host is out of service (COMPUTE_STATUS_DISABLED). */
  disabled: boolean
}

export interface Claim {
  consumer: string
  change: 'new' | 'changed' | 'removed' | 'recent'
  resources: Record<string, number>
  providers: string[]
  /** ISO time the change was seen (or the consumer's updated_at for "recent"). */
  at: string
}

export interface Frame {
  at: string
  endpoint: string
  transport: 'placemat' | 'placement'
  providers: number
  consumers: number
  /** Hosts out of service (COMPUTE_STATUS_DISABLED), by name. */
  disabled_hosts: string[]
  classes: ClassRow[]
  fullest: FullRow[]
  claims: Claim[]
  /** With a flavor: each rack's fit for it, by room and row, fullest (least fit) first. */
  capacity?: {flavor: string; racks: RackFit[]}
}

export interface RackFit {
  room: string | null
  row: string | null
  rack: string
  fit: number
  pooled: number
}

export const percent = (used: number, capacity: number) => (capacity > 0 ? (100 * used) / capacity : used > 0 ? Infinity : 0)

export const fmtPercent = (used: number, capacity: number) => {
  const p = percent(used, capacity)
  return Number.isFinite(p) ? `${p.toFixed(1)}%` : 'over'
}

export const fmtResources = (r: Record<string, number>) =>
  Object.entries(r)
    .map(([rc, n]) => `${rc}=${n}`)
    .join(',')

export const clock = (iso: string) => iso.slice(11, 19)

/** A text bar of `width` characters. */
export function textBar(ratio: number, width: number, fill = '#', empty = '.'): string {
  const r = Number.isFinite(ratio) ? Math.max(0, Math.min(1, ratio)) : 1
  const n = Math.round(r * width)
  return fill.repeat(n) + empty.repeat(width - n)
}

const pad = (s: string | number, w: number, right = false) => (right ? String(s).padStart(w) : String(s).padEnd(w))

/** The hosts out of service, after the counts: ", 2 hosts disabled: cn-3, cn-7" ("" when none). */
export function disabledText(f: Pick<Frame, 'disabled_hosts'>, shown = 5): string {
  const n = f.disabled_hosts.length
  if (n === 0) return ''
  const names = f.disabled_hosts.slice(0, shown).join(', ') + (n > shown ? ` and ${n - shown} more` : '')
  return `, ${n} host${n === 1 ? '' : 's'} disabled: ${names}`
}

/** One frame as plain text (no color, no cursor movement). */
export function renderFrameText(f: Frame): string {
  const lines: string[] = []
  lines.push(`placemat top  ${f.endpoint} (${f.transport})  ${f.at.slice(0, 19).replace('T', ' ')}Z`)
  lines.push(`${f.providers} providers, ${f.consumers} consumers with allocations${disabledText(f)}`)
  lines.push('')
  const cw = Math.max(14, ...f.classes.map((c) => c.resource_class.length))
  const nw = Math.max(4, ...f.classes.map((c) => String(c.capacity).length))
  lines.push(
    `${pad('RESOURCE CLASS', cw)}  ${pad('USAGE', 30)}  ${pad('USED', nw, true)}  ${pad('CAPACITY', Math.max(nw, 8), true)}  ${pad('%', 7, true)}`,
  )
  for (const c of f.classes) {
    lines.push(
      `${pad(c.resource_class, cw)}  [${textBar(c.capacity ? c.used / c.capacity : 0, 28)}]  ${pad(c.used, nw, true)}  ${pad(c.capacity, Math.max(nw, 8), true)}  ${pad(fmtPercent(c.used, c.capacity), 7, true)}`,
    )
  }
  if (!f.classes.length) lines.push('(no inventories)')
  lines.push('')
  lines.push('FULLEST PROVIDERS')
  if (!f.fullest.length) lines.push('(nothing allocated)')
  const pw = Math.max(8, ...f.fullest.map((r) => r.name.length))
  const rw = Math.max(5, ...f.fullest.map((r) => r.resource_class.length))
  for (const r of f.fullest) {
    lines.push(
      `${pad(r.name, pw)}  ${pad(r.resource_class, rw)}  [${textBar(r.ratio, 20)}]  ${r.used}/${r.capacity}  ${fmtPercent(r.used, r.capacity)}${r.disabled ? '  (host disabled)' : ''}`,
    )
  }
  if (f.capacity) {
    lines.push('')
    lines.push(`RACKS BY FIT FOR ${f.capacity.flavor} (fullest first)`)
    if (!f.capacity.racks.length) lines.push('(no racks)')
    const kw = Math.max(4, ...f.capacity.racks.map((r) => `${r.room ?? '-'}/${r.row ?? '-'}/${r.rack}`.length))
    for (const r of f.capacity.racks)
      lines.push(`${pad(`${r.room ?? '-'}/${r.row ?? '-'}/${r.rack}`, kw)}  fit ${r.fit} (${r.pooled} if it were one host)`)
  }
  lines.push('')
  lines.push('RECENT CLAIMS')
  if (!f.claims.length) lines.push(f.transport === 'placemat' ? '(none)' : '(changes show from the next frame)')
  for (const c of f.claims) {
    lines.push(`${clock(c.at)}  ${pad(c.change, 7)}  ${c.consumer}  ${fmtResources(c.resources)}  on ${c.providers.join(',')}`)
  }
  return lines.join('\n')
}
