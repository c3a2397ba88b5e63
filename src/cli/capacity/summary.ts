/**
 * What `placemat capacity` prints as a table by default, the summary a planner reads first:
 * domains as rows, flavors as columns, each cell how many more fit and what binds; with a
 * what-if, the count after and its change. Amounts in the units a planner reads them in.
 */
import type {DomainHeadroom} from '../../core/headroom/headroom.js'
import type {FitChange} from '../../core/headroom/what-if-headroom.js'
import type {LossesAnswer} from '../../core/headroom/losses.js'
import type {MixAnswer, MixDomain} from '../../core/headroom/flavor-mix.js'
import type {Column} from '../output.js'

export interface SummaryRow {
  level: string
  name: string
  cells: Map<string, string>
}

/** Short words for the standard classes a flavor asks; any other class by its name. */
const WORDS: Record<string, string> = {
  VCPU: 'vcpu',
  PCPU: 'pcpu',
  MEMORY_MB: 'ram',
  DISK_GB: 'disk',
  VGPU: 'vgpu',
  NET_BW_EGR_KILOBIT_PER_SEC: 'bw-out',
  NET_BW_IGR_KILOBIT_PER_SEC: 'bw-in',
  NET_PACKET_RATE_KILOPACKET_PER_SEC: 'pps',
}

/** A binding as a cell shows it: `ram`, `disk` (the hosts' own), `disk@ceph-1` (a pool's). */
export function bindingWord(binding: string | null): string {
  if (!binding) return ''
  const at = binding.indexOf('@')
  const rc = at < 0 ? binding : binding.slice(0, at)
  return (WORDS[rc] ?? rc) + (at < 0 ? '' : binding.slice(at))
}

const signed = (n: number): string => (n > 0 ? `+${n}` : `${n}`)

/**
 * The summary: one row per domain (in the order the rows come), a column per flavor. With
 * `changes` (a what-if), each cell is the fit after and its change, domains lost among them.
 */
export function summaryTable(
  domains: readonly DomainHeadroom[],
  changes?: readonly FitChange[],
): {rows: SummaryRow[]; columns: Array<Column<SummaryRow>>} {
  const flavors: string[] = []
  const rows = new Map<string, SummaryRow>()
  const rowOf = (level: string, name: string): SummaryRow => {
    const key = `${level}\n${name}`
    let row = rows.get(key)
    if (!row) rows.set(key, (row = {level, name, cells: new Map()}))
    return row
  }
  const binding = new Map<string, string | null>()
  for (const d of domains) {
    if (!flavors.includes(d.flavor)) flavors.push(d.flavor)
    binding.set(`${d.level}\n${d.name}\n${d.flavor}`, d.binding)
    if (!changes) rowOf(d.level, d.name).cells.set(d.flavor, `${d.fit} ${bindingWord(d.binding)}`.trimEnd())
  }
  for (const c of changes ?? []) {
    if (!flavors.includes(c.flavor)) flavors.push(c.flavor)
    const word = bindingWord(binding.get(`${c.level}\n${c.name}\n${c.flavor}`) ?? null)
    rowOf(c.level, c.name).cells.set(c.flavor, `${c.after} (${signed(c.change)}) ${word}`.trimEnd())
  }
  const columns: Array<Column<SummaryRow>> = [
    {key: 'level'},
    {key: 'name'},
    ...flavors.map((f) => ({key: f, header: f, align: 'right' as const, get: (r: SummaryRow) => r.cells.get(f) ?? ''})),
  ]
  return {rows: [...rows.values()], columns}
}

/** N+1 as a table: a row per loss, a column per flavor (what the cloud then holds), and the worst last. */
export function lossTable(answer: LossesAnswer): {rows: LossRow[]; columns: Array<Column<LossRow>>} {
  const flavors = Object.keys(answer.worst)
  const rows: LossRow[] = answer.losses.map((l) => ({
    name: `${l.level} ${l.name}`,
    hosts: l.hosts,
    displaced: l.displaced,
    unplaced: l.unplaced,
    survives: l.survives ? 'yes' : 'NO',
    fit: l.fit,
  }))
  if (rows.length)
    rows.push({name: 'worst', hosts: '', displaced: '', unplaced: '', survives: answer.survives ? 'yes' : 'NO', fit: answer.worst})
  const columns: Array<Column<LossRow>> = [
    ...LOSS_COLUMNS,
    ...flavors.map((f) => ({key: f, header: f, align: 'right' as const, get: (r: LossRow) => r.fit[f]})),
  ]
  return {rows, columns}
}

/** A flavor mix as a table: a row per domain, the mix's fit, then how many of each flavor. */
export function mixTable(answer: MixAnswer): {rows: MixDomain[]; columns: Array<Column<MixDomain>>} {
  const flavors = [...new Set(answer.mix.map((m) => m.flavor))]
  return {
    rows: answer.domains,
    columns: [...MIX_COLUMNS, ...flavors.map((f) => ({key: f, header: f, align: 'right' as const, get: (d: MixDomain) => d.by_flavor[f]}))],
  }
}

/** What a mix's table has besides a column per flavor. */
export const MIX_COLUMNS: Array<Column<MixDomain>> = [{key: 'level'}, {key: 'name'}, {key: 'fit', header: 'mix fit', align: 'right'}]

/** What an N+1 table has besides a column per flavor. */
export const LOSS_COLUMNS: Array<Column<LossRow>> = [
  {key: 'name', header: 'lost'},
  {key: 'hosts', align: 'right'},
  {key: 'displaced', align: 'right'},
  {key: 'unplaced', align: 'right'},
  {key: 'survives'},
]

export interface LossRow {
  name: string
  hosts: number | ''
  displaced: number | ''
  unplaced: number | ''
  survives: string
  fit: Record<string, number>
}

/** An amount of a class as a planner reads it: memory in GiB, disk in GB, the rest as counted. */
export function amountText(rc: string, n: number): string {
  if (rc === 'MEMORY_MB') return n >= 1024 ? `${(n / 1024).toFixed(1)} GiB` : `${n} MiB`
  if (rc === 'DISK_GB') return `${n} GB`
  return `${n}`
}
