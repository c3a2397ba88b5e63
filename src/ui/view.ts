/**
 * What the map shows, as its URL names it, so a view can be shared and reloaded:
 * `?flavor=NAME&class=CLASS&without=rack:NAME&ratio=VCPU=8&select=rack:NAME`. The token never
 * is in it: it comes in the fragment (`#token=...`, which browsers never send) and is moved to the
 * tab's session storage. Pure: the page's URL in, its view out, and back.
 */

export type Level = 'host' | 'rack' | 'row' | 'room' | 'cloud'
export type LostLevel = 'host' | 'rack' | 'row' | 'room'

export interface DomainRef {
  level: Level
  name: string
}

export interface View {
  /** The flavor whose fit colours the boxes (null: the catalog's first, or none). */
  flavor: string | null
  /** The class whose use colours the boxes instead (null: colour by fit). */
  cls: string | null
  /** A what-if: the domains taken out. */
  without: Array<{level: LostLevel; name: string}>
  /** A what-if: classes given another allocation ratio. */
  ratios: Array<[string, number]>
  /** The domain whose details are shown. */
  select: DomainRef | null
}

const LOST: readonly string[] = ['host', 'rack', 'row', 'room']
const LEVELS: readonly string[] = [...LOST, 'cloud']

/** `LEVEL:NAME` as a domain of one of `levels`; null when it is not one. */
function domainOf(v: string, levels: readonly string[]): {level: string; name: string} | null {
  const at = v.indexOf(':')
  const level = v.slice(0, at)
  return at > 0 && levels.includes(level) && at < v.length - 1 ? {level, name: v.slice(at + 1)} : null
}

/** `CLASS=R` with R a number above 0; null when it is not one. */
export function ratioOf(v: string): [string, number] | null {
  const m = /^([A-Z0-9_]+)=(.+)$/.exec(v)
  const r = m ? Number(m[2]) : Number.NaN
  return m && Number.isFinite(r) && r > 0 ? [m[1], r] : null
}

/** The view a URL's query names (what it cannot read is left out). */
export function parseView(search: string): View {
  const q = new URLSearchParams(search)
  const without = q
    .getAll('without')
    .map((v) => domainOf(v, LOST))
    .filter((d): d is {level: LostLevel; name: string} => d !== null)
  const ratios = q
    .getAll('ratio')
    .map(ratioOf)
    .filter((r): r is [string, number] => r !== null)
  const select = domainOf(q.get('select') ?? '', LEVELS) as DomainRef | null
  return {flavor: q.get('flavor') || null, cls: q.get('class') || null, without, ratios, select}
}

/** The query naming `view` (`?` and its parameters, or '' for the default view). */
export function viewQuery(view: View): string {
  const q = new URLSearchParams()
  if (view.flavor) q.set('flavor', view.flavor)
  if (view.cls) q.set('class', view.cls)
  for (const d of view.without) q.append('without', `${d.level}:${d.name}`)
  for (const [rc, r] of view.ratios) q.append('ratio', `${rc}=${r}`)
  if (view.select) q.set('select', `${view.select.level}:${view.select.name}`)
  const text = q.toString()
  return text ? `?${text}` : ''
}

/** The query of the values a view needs from the daemon (the selection is the page's own). */
export function valuesQuery(view: View): string {
  return viewQuery({...view, select: null})
}

/** Whether the view asks a what-if. */
export const isWhatIf = (view: View): boolean => view.without.length > 0 || view.ratios.length > 0

/** The view with `d` taken out too (once). */
export function without(view: View, d: {level: LostLevel; name: string}): View {
  if (view.without.some((w) => w.level === d.level && w.name === d.name)) return view
  return {...view, without: [...view.without, d]}
}

/** The view with `rc`'s ratio set to `r` (replacing one given before). */
export function withRatio(view: View, rc: string, r: number): View {
  return {...view, ratios: [...view.ratios.filter(([c]) => c !== rc), [rc, r]]}
}

/** The token a fragment carries (`#token=...`, among other parameters or alone); null without one. */
export function tokenOfFragment(hash: string): string | null {
  const token = new URLSearchParams(hash.replace(/^#/, '')).get('token')
  return token ? token : null
}

/** The domain a box's key (`LEVEL:NAME`) names; null for one that is none (the group of hosts in no rack). */
export const refOfKey = (key: string): DomainRef | null => domainOf(key, LEVELS) as DomainRef | null

/** Whether `v` names a domain the page can take out. */
export const isLostLevel = (v: string): v is LostLevel => LOST.includes(v)

/**
 * The view as a daemon with these flavors and classes can answer it: its flavor one of the
 * catalog's (the first when it names none or another), its class one the hosts hold (none when
 * not); without a catalog, coloured by the use of VCPU (or the first class) instead of nothing.
 */
export function answerable(view: View, has: {flavors: readonly string[]; classes: readonly string[]}): View {
  const flavor = view.flavor && has.flavors.includes(view.flavor) ? view.flavor : (has.flavors[0] ?? null)
  let cls = view.cls && has.classes.includes(view.cls) ? view.cls : null
  if (flavor === null && cls === null) cls = has.classes.includes('VCPU') ? 'VCPU' : (has.classes[0] ?? null)
  return {...view, flavor, cls}
}
