/**
 * The panel beside the map: the domain hovered or selected, with the numbers its box counts
 * (fit, pooled, loss, disabled fit, binding; before and after a what-if; the class's use) at once,
 * and what the daemon tells of it when asked (map/domain: use per class, hosts, consumers, pools,
 * placement groups and their members); the pools; and a what-if's displaced consumers.
 */
import type {MapDomain} from '../core/map/map-domain.js'
import type {MapLayoutAnswer} from '../core/map/map-layout.js'
import type {MapWhatIf} from '../core/map/map-values.js'
import {fill, h, num, short} from './dom.js'
import {percent, strandedText, type Box, type Picture} from './model.js'

export interface DetailsActions {
  /** Takes the domain out (a what-if); absent where it cannot be (the cloud, the hosts in no rack). */
  takeOut?: () => void
}

const row = (k: string, ...v: Array<string | number | Node>) =>
  h('tr', {}, h('th', {}, k), h('td', {class: 'n'}, ...v.map((x) => (typeof x === 'number' ? num(x) : x))))

/** The panel for `b`: its numbers now, and `detail` once the daemon answered (null meanwhile). */
export function showDetails(
  panel: HTMLElement,
  b: Box,
  pictures: {now: Picture; after?: Picture},
  detail: MapDomain | null,
  actions: DetailsActions,
): void {
  const p = pictures.now
  const after = pictures.after?.byKey.get(b.key)
  const title = b.level === 'unracked' ? 'hosts in no rack' : `${b.level} ${b.name}`
  const numbers = h('table', {class: 'numbers'})
  if (p.flavor && b.fit !== null) {
    numbers.append(
      h('caption', {}, `${p.flavor}`),
      row('fit', b.fit, ...(after && after.fit !== b.fit ? [` → ${after.lost ? 'lost' : num(after.fit ?? 0)}`] : [])),
      row('pooled', b.pooled ?? 0),
      row('fragmentation loss', b.loss ?? 0),
      row('disabled fit', b.disabledFit ?? 0),
      row('binding', b.binding ?? '—'),
    )
  }
  if (p.cls && b.capacity !== null)
    numbers.append(row(`${p.cls} used`, `${num(b.used ?? 0)} of ${num(b.capacity)} (${percent(b.used ?? 0, b.capacity)})`))
  numbers.append(row('hosts', b.hostCount), row('disabled hosts', b.disabledCount))
  const stranded = strandedText(b.stranded)
  if (stranded) numbers.append(row('stranded', stranded))
  const take = actions.takeOut ? h('button', {type: 'button', class: 'take-out'}, `What if ${b.level} ${b.name} were lost?`) : null
  if (take) take.addEventListener('click', () => actions.takeOut?.())
  fill(
    panel,
    h('h2', {}, title),
    b.lost ? h('p', {}, 'Lost in the what-if.') : null,
    numbers,
    take,
    ...(detail ? detailParts(detail) : [h('p', {class: 'loading'}, '…')]),
  )
  panel.dataset.key = b.key
}

function detailParts(d: MapDomain): HTMLElement[] {
  const out: HTMLElement[] = []
  const usage = Object.entries(d.usage)
  if (usage.length) {
    const t = h(
      'table',
      {class: 'usage'},
      h('tr', {}, h('th', {}, 'class'), h('th', {class: 'n'}, 'used'), h('th', {class: 'n'}, 'capacity'), h('th', {class: 'n'}, '%')),
    )
    for (const [rc, u] of usage)
      t.append(
        h(
          'tr',
          {},
          h('td', {}, rc),
          h('td', {class: 'n'}, short(u.used)),
          h('td', {class: 'n'}, short(u.capacity)),
          h('td', {class: 'n'}, percent(u.used, u.capacity)),
        ),
      )
    out.push(h('h3', {}, 'Use per class'), t)
  }
  const disabled = new Set(d.disabled)
  if (d.level !== 'host') {
    const list = h('ul', {class: 'hosts'})
    for (const name of d.hosts) list.append(h('li', {}, name, disabled.has(name) ? ' (disabled)' : ''))
    out.push(h('h3', {}, `Hosts (${num(d.host_count)}${d.hosts.length < d.host_count ? `, the first ${d.hosts.length}` : ''})`), list)
  }
  out.push(h('h3', {}, `Consumers: ${num(d.consumer_count)}`))
  if (d.level === 'host' && d.consumers.length) {
    const list = h('ul', {class: 'consumers'})
    for (const c of d.consumers) list.append(h('li', {}, h('code', {}, c)))
    out.push(list)
  }
  if (d.pools.length) out.push(h('h3', {}, 'Pools reached'), h('p', {}, d.pools.join(', ')))
  if (d.groups.length) {
    out.push(h('h3', {}, 'Placement groups here'))
    for (const g of d.groups) {
      const members = h('ul', {})
      for (const m of g.members)
        members.append(
          h(
            'li',
            {class: m.here ? 'here' : ''},
            h('code', {}, m.consumer.slice(0, 8)),
            ` on ${m.hosts.join(', ') || 'no host'}`,
            m.here ? ' (here)' : '',
          ),
        )
      out.push(
        h(
          'div',
          {class: 'group', 'data-group': g.name},
          h('p', {}, h('strong', {}, g.name), `: ${g.rule}, ${g.member_count} members${g.violations ? `, ${g.violations} broken` : ''}`),
          members,
        ),
      )
    }
  }
  return out
}

/** The pools, each with what it holds and the domains it serves; `onHover` is told which pool the pointer or focus is on. */
export function showPools(
  section: HTMLElement,
  layout: MapLayoutAnswer,
  used: Record<string, Record<string, number>>,
  onHover: (hosts: number[] | null) => void,
): void {
  if (!layout.pools.length) {
    fill(section)
    return
  }
  const items = layout.pools.map((pool) => {
    const use = Object.entries(pool.capacity)
      .map(([rc, c]) => `${rc} ${percent(used[pool.name]?.[rc] ?? 0, c)} used`)
      .join(', ')
    const serves = pool.serves.map((d) => (d.level === 'cloud' ? 'the whole cloud' : `${d.level} ${d.name}`)).join(', ') || 'no host'
    const el = h(
      'div',
      {class: 'pool', tabindex: 0, 'data-level': 'pool', 'data-name': pool.name},
      h('strong', {}, pool.name),
      ` — ${use}; serves ${serves}`,
    )
    const on = () => onHover(pool.hosts)
    const off = () => onHover(null)
    el.addEventListener('mouseenter', on)
    el.addEventListener('focus', on)
    el.addEventListener('mouseleave', off)
    el.addEventListener('blur', off)
    return el
  })
  fill(section, h('h2', {}, 'Sharing pools (hover: the hosts each serves)'), ...items)
}

/** A what-if's outcome: whether the cloud survives it, and each displaced consumer with where it would go. */
export function showDisplaced(section: HTMLElement, w: MapWhatIf | undefined): void {
  if (!w) {
    section.hidden = true
    fill(section)
    return
  }
  section.hidden = false
  const t = h('table', {}, h('tr', {}, h('th', {}, 'consumer'), h('th', {}, 'from'), h('th', {}, 'to'), h('th', {}, 'why not')))
  for (const d of w.displaced.slice(0, 500))
    t.append(
      h(
        'tr',
        {'data-consumer': d.consumer},
        h('td', {}, h('code', {}, d.consumer)),
        h('td', {}, d.from.join(', ')),
        h('td', {}, d.to ? d.to.join(', ') : 'nowhere'),
        h('td', {}, d.why ?? ''),
      ),
    )
  const lost = w.without.map((d) => `${d.level} ${d.name}`)
  const ratios = Object.entries(w.ratios).map(([rc, r]) => `${rc} ratio ${r}`)
  fill(
    section,
    h('h2', {}, `What if: ${[...lost, ...ratios].join(', ')}`),
    h(
      'p',
      {class: 'survives', 'data-survives': String(w.survives)},
      w.survives ? 'Survives: ' : 'Does NOT survive: ',
      `${num(w.displaced.length)} consumer(s) displaced, ${num(w.displaced.filter((d) => !d.to).length)} with nowhere to go.`,
    ),
    w.displaced.length ? t : null,
    w.displaced.length > 500 ? h('p', {}, `and ${num(w.displaced.length - 500)} more`) : null,
  )
}
