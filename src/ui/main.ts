/**
 * The map page: takes the token (from the fragment, moved to the tab's session storage and cleared
 * from the address bar, or typed), asks the daemon for the layout and the view's values, draws
 * them, and asks again every few seconds (304 while nothing changed), saying it is reconnecting
 * while the daemon cannot be reached. The URL names the view; hovering, focusing or selecting a
 * domain shows its details; a what-if is asked from the details (take a domain out) or the ratio
 * field, and drawn beside the cloud as it is, with arrows where the displaced consumers would go.
 * The root element says where the page stands: data-state (live, reconnecting, token, error),
 * data-ready once a map is drawn, data-view the values' query drawn, data-drawn how many times.
 */
import type {MapDomain} from '../core/map/map-domain.js'
import type {MapLayoutAnswer} from '../core/map/map-layout.js'
import type {MapValues} from '../core/map/map-values.js'
import {Answered, Refused, Unreachable, forgetToken, getJson, storeToken, storedToken, type Fetched} from './api.js'
import {showDetails, showDisplaced, showPools} from './details.js'
import {byId, fill, h} from './dom.js'
import {FrameWatch} from './frames.js'
import {stepFrom, stepOfKey} from './keys.js'
import {picture, scaleOf, type Box, type Picture} from './model.js'
import {arrows, displacedMoves, type MoveSource} from './moves.js'
import {MapView, legend} from './render.js'
import {
  answerable,
  isLostLevel,
  parseView,
  refOfKey,
  ratioOf,
  tokenOfFragment,
  valuesQuery,
  viewQuery,
  without,
  withRatio,
  type View,
} from './view.js'

const POLL_MS = 5000
const HIDDEN_POLL_MS = 30_000
const RETRY_MOST_MS = 10_000

const root = document.documentElement
const frames = new FrameWatch(root)
const el = {
  status: byId('status'),
  controls: byId<HTMLFormElement>('controls'),
  flavor: byId<HTMLSelectElement>('flavor'),
  cls: byId<HTMLSelectElement>('class'),
  ratio: byId<HTMLInputElement>('ratio'),
  ratioSet: byId('ratio-set'),
  whatIf: byId('what-if'),
  tokenForm: byId<HTMLFormElement>('token-form'),
  token: byId<HTMLInputElement>('token'),
  tokenError: byId('token-error'),
  main: byId('main'),
  legend: byId('legend'),
  sides: byId('sides'),
  pools: byId('pools'),
  displaced: byId('displaced'),
  details: byId('details'),
}

let token: string | null = null
let view: View = parseView(location.search)
let layout: Fetched<MapLayoutAnswer> | null = null
/** The layout's hosts, racks, rows and rooms as one string: a map of the same shape is drawn over, not anew. */
let shape = ''
let values: (Fetched<MapValues> & {query: string}) | null = null
let pictures: {now: Picture; after?: Picture} | null = null
const sides = {now: new MapView('now', null), before: new MapView('before', 'Before'), after: new MapView('after', 'After the what-if')}
let mounted: MapView[] = []
let focusKey = 'cloud:cloud'
let hoverKey: string | null = null
let timer: ReturnType<typeof setTimeout> | undefined
let failures = 0
let busy = false
let again = false
let drawn = 0

/**
 * Where the arrows come from: a what-if's displaced consumers. A make-room plan, once the daemon
 * answers one, is another source: its moves go through the same arrows (moves.ts).
 */
const moveSources: MoveSource[] = [
  () => (values?.body.what_if && layout ? displacedMoves(values.body.what_if.displaced, new Set(layout.body.hosts)) : []),
]

function setStatus(state: 'live' | 'reconnecting' | 'token' | 'error' | 'starting', text: string): void {
  root.dataset.state = state
  el.status.dataset.state = state
  el.status.textContent = text
}

/** The view as the daemon can answer it (view.ts answerable). */
const effective = (): View => (layout ? answerable(view, layout.body) : view)

// ---- the token ---------------------------------------------------------------------------------

function askToken(message = ''): void {
  token = null
  clearTimeout(timer)
  setStatus('token', 'token needed')
  el.tokenForm.hidden = false
  el.tokenError.textContent = message
  el.main.hidden = true
  el.details.hidden = true
  el.controls.hidden = true
  el.token.focus()
}

el.tokenForm.addEventListener('submit', (e) => {
  e.preventDefault()
  const given = el.token.value.trim()
  if (!given) return
  storeToken(given)
  el.token.value = ''
  start(given)
})

function start(t: string): void {
  token = t
  el.tokenForm.hidden = true
  el.main.hidden = false
  el.details.hidden = false
  el.controls.hidden = false
  setStatus('starting', 'asking the daemon')
  void poll()
}

// ---- asking the daemon -------------------------------------------------------------------------

function schedule(ms: number): void {
  clearTimeout(timer)
  timer = setTimeout(() => void poll(), ms)
}

async function poll(): Promise<void> {
  if (!token) return
  clearTimeout(timer)
  if (busy) {
    again = true
    return
  }
  busy = true
  try {
    await refresh(token)
    failures = 0
    setStatus('live', `live · ${new Date().toLocaleTimeString()}`)
    schedule(document.hidden ? HIDDEN_POLL_MS : POLL_MS)
  } catch (err) {
    if (err instanceof Refused) {
      forgetToken()
      askToken(err.status === 401 ? 'The daemon refused this token.' : `This token may not read placemat's API: ${err.message}`)
    } else if (err instanceof Unreachable) {
      failures++
      setStatus('reconnecting', `reconnecting to the daemon… (${err.message || 'unreachable'})`)
      schedule(Math.min(RETRY_MOST_MS, 1000 * 2 ** (failures - 1)))
    } else if (err instanceof Answered) {
      setStatus('error', err.message)
      schedule(POLL_MS)
    } else throw err
  } finally {
    busy = false
    if (again) {
      again = false
      void poll()
    }
  }
}

async function refresh(t: string): Promise<void> {
  const l = await getJson<MapLayoutAnswer>('map/layout', t, layout?.etag ?? null)
  if (l) {
    layout = l
    shape = JSON.stringify([l.body.hosts, l.body.tree, l.body.unracked])
  }
  const q = valuesQuery(effective())
  const v = await getJson<MapValues>(`map/values${q}`, t, values?.query === q ? values.etag : null)
  if (v) values = {...v, query: q}
  if (l || v || !pictures) draw()
}

// ---- drawing -----------------------------------------------------------------------------------

function selectedKey(): string | null {
  return view.select ? `${view.select.level}:${view.select.name}` : null
}

function draw(): void {
  if (!layout || !values) return
  const started = performance.now()
  const v = effective()
  const opts = {flavor: v.flavor, cls: v.cls}
  const now = picture(layout.body, values.body.now, opts)
  const after = values.body.after
    ? picture(layout.body, values.body.after, {...opts, before: values.body.now, scale: scaleOf(values.body.now)})
    : undefined
  pictures = {now, after}
  const sel = selectedKey()
  const shown = after ? [sides.before, sides.after] : [sides.now]
  if (after) {
    sides.before.draw(now, shape, sel)
    sides.after.draw(after, shape, sel)
  } else sides.now.draw(now, shape, sel)
  if (shown.length !== mounted.length || shown.some((s, i) => s !== mounted[i])) {
    el.sides.replaceChildren(...shown.map((s) => s.element))
    mounted = shown
  }
  // A flavor that fits nowhere, or only on disabled hosts, says so (capacity's lint).
  const lint = values.body.lint.filter((x) => x.flavor === v.flavor).map((x) => h('strong', {class: 'lint'}, `${x.flavor}: ${x.problem}`))
  fill(el.legend, ...legend(now), ...lint)
  controls(v)
  showPools(el.pools, layout.body, values.body.now.pools ?? {}, highlight)
  showDisplaced(el.displaced, values.body.what_if)
  rove(focusKey)
  showFor(hoverKey ?? sel ?? focusKey)
  root.dataset.ready = 'true'
  root.dataset.view = values.query
  root.dataset.drawn = String(++drawn)
  frames.drawn(started)
  // The arrows once the boxes are laid out.
  requestAnimationFrame(() => {
    const moves = arrows(moveSources.flatMap((source) => source()))
    sides.after.drawArrows(after ? moves.arrows : [])
    root.dataset.arrows = String(after ? moves.arrows.length : 0)
  })
}

function controls(v: View): void {
  const l = layout!.body
  const options = (select: HTMLSelectElement, names: string[], chosen: string | null, none?: string) => {
    const wanted = [...(none === undefined ? [] : ['']), ...names]
    if ([...select.options].map((o) => o.value).join('\n') !== wanted.join('\n'))
      select.replaceChildren(...wanted.map((n) => h('option', {value: n}, n || none)))
    select.value = chosen ?? ''
  }
  options(el.flavor, l.flavors, v.flavor)
  el.flavor.disabled = l.flavors.length === 0
  options(el.cls, l.classes, v.cls, '(no class)')
  const chips = [
    ...view.without.map((d, i) =>
      chip(`without ${d.level} ${d.name}`, () => go({...view, without: view.without.filter((_, j) => j !== i)})),
    ),
    ...view.ratios.map(([rc, r], i) => chip(`${rc} ratio ${r}`, () => go({...view, ratios: view.ratios.filter((_, j) => j !== i)}))),
  ]
  if (chips.length) {
    const clear = h('button', {type: 'button'}, 'clear the what-if')
    clear.addEventListener('click', () => go({...view, without: [], ratios: []}))
    chips.push(clear)
  }
  fill(el.whatIf, ...chips)
}

function chip(text: string, remove: () => void): HTMLElement {
  const x = h('button', {type: 'button', 'aria-label': `remove ${text}`}, '×')
  x.addEventListener('click', remove)
  return h('span', {class: 'chip'}, text, x)
}

/** Marks the hosts a pool serves (null: none). */
let served: HTMLElement[] = []
function highlight(hosts: number[] | null): void {
  for (const e of served) e.classList.remove('served')
  served = []
  if (!hosts || !layout) return
  for (const side of mounted)
    for (const i of hosts) {
      const e = side.elementOf(`host:${layout.body.hosts[i]}`)
      if (e) {
        e.classList.add('served')
        served.push(e)
      }
    }
  frames.watch()
}

// ---- the view in the URL -----------------------------------------------------------------------

/** Shows `v`: named in the URL (a new history entry), asked of the daemon. */
function go(v: View): void {
  view = v
  history.pushState(null, '', location.pathname + viewQuery(v))
  void poll()
}

window.addEventListener('popstate', () => {
  view = parseView(location.search)
  void poll()
})

el.flavor.addEventListener('change', () => go({...view, flavor: el.flavor.value || null}))
el.cls.addEventListener('change', () => go({...view, cls: el.cls.value || null}))
el.controls.addEventListener('submit', (e) => e.preventDefault())
const setRatio = () => {
  const r = ratioOf(el.ratio.value.trim())
  if (!r) {
    setStatus('error', `A ratio is CLASS=R, R above 0 (VCPU=8), not ${el.ratio.value}`)
    return
  }
  el.ratio.value = ''
  go(withRatio(view, r[0], r[1]))
}
el.ratioSet.addEventListener('click', setRatio)
el.ratio.addEventListener('keydown', (e) => {
  if (e.key === 'Enter') {
    e.preventDefault()
    setRatio()
  }
})

// ---- hovering, selecting, moving with the keyboard ---------------------------------------------

const keyOf = (target: EventTarget | null): string | null =>
  ((target as Element | null)?.closest?.('[data-key]') as HTMLElement | null)?.dataset.key ?? null
const sideOf = (target: EventTarget | null): MapView => mounted.find((s) => s.element.contains(target as Node)) ?? mounted[0]

/** The details of a box: at once what its box counts, then what the daemon tells of it. */
let detailTimer: ReturnType<typeof setTimeout> | undefined
const detailsKept = new Map<string, Fetched<MapDomain>>()
function showFor(key: string): void {
  const b = pictures?.now.byKey.get(key)
  if (!b || !pictures) return
  const kept = detailsKept.get(key)
  showDetails(el.details, b, pictures, kept?.body ?? null, takeOut(b))
  clearTimeout(detailTimer)
  if (b.level === 'unracked' || !token) return
  const t = token
  detailTimer = setTimeout(async () => {
    try {
      const got = await getJson<MapDomain>(`map/domain?${new URLSearchParams({level: b.level, name: b.name})}`, t, kept?.etag ?? null)
      if (got) detailsKept.set(key, got)
      const now = pictures?.now.byKey.get(key)
      if (el.details.dataset.key === key && now && pictures)
        showDetails(el.details, now, pictures, detailsKept.get(key)?.body ?? null, takeOut(now))
    } catch {
      // The next poll says what is wrong.
    }
  }, 120)
}

function takeOut(b: Box): {takeOut?: () => void} {
  if (!isLostLevel(b.level) || b.lost) return {}
  const level = b.level
  return {takeOut: () => go(without(view, {level, name: b.name}))}
}

/** Makes `key` the box the keyboard is on (the one with tabindex 0). */
function rove(key: string): void {
  for (const side of mounted) {
    side.elementOf(focusKey)?.setAttribute('tabindex', '-1')
    side.elementOf(key)?.setAttribute('tabindex', '0')
  }
  focusKey = key
}

function select(key: string): void {
  const ref = refOfKey(key)
  if (!ref) return
  view = {...view, select: ref}
  history.replaceState(null, '', location.pathname + viewQuery(view))
  draw()
}

el.sides.addEventListener('mouseover', (e) => {
  const key = keyOf(e.target)
  if (key && key !== hoverKey) {
    hoverKey = key
    showFor(key)
    frames.watch()
  }
})
el.sides.addEventListener('mouseleave', () => {
  hoverKey = null
  showFor(selectedKey() ?? focusKey)
})
el.sides.addEventListener('click', (e) => {
  const key = keyOf(e.target)
  if (key) {
    rove(key)
    select(key)
  }
})
el.sides.addEventListener('focusin', (e) => {
  const key = keyOf(e.target)
  if (key) {
    rove(key)
    if (!hoverKey) showFor(key)
  }
})
el.sides.addEventListener('keydown', (e) => {
  const side = sideOf(e.target)
  const p = side === sides.after ? pictures?.after : pictures?.now
  if (!p) return
  if (e.key === ' ') {
    e.preventDefault()
    select(focusKey)
    return
  }
  if (e.key === 't') {
    const b = p.byKey.get(selectedKey() ?? focusKey)
    const act = b && takeOut(b).takeOut
    if (act) act()
    return
  }
  const step = stepOfKey(e.key)
  if (!step) return
  e.preventDefault()
  const to = stepFrom(p, focusKey, step)
  rove(to.key)
  const target = side.elementOf(to.key)
  target?.focus({preventScroll: true})
  target?.scrollIntoView({block: 'nearest', inline: 'nearest'})
  frames.watch()
})
window.addEventListener('resize', () => {
  if (pictures?.after) {
    const moves = arrows(moveSources.flatMap((source) => source()))
    sides.after.drawArrows(moves.arrows)
  }
})
document.addEventListener('visibilitychange', () => {
  if (!document.hidden && token) void poll()
})

// ---- start -------------------------------------------------------------------------------------

const given = tokenOfFragment(location.hash)
if (given) {
  storeToken(given)
  // Out of the address bar (and so out of the history and of anything the URL is copied to).
  history.replaceState(null, '', location.pathname + location.search)
}
const stored = storedToken()
if (stored) start(stored)
else askToken()
