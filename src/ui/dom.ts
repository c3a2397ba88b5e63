/** Elements made from data as text, never as markup (names are the cloud's: nothing in them is ever read as HTML). */

type Child = Node | string | number | null | undefined | false

/** An element with attributes (`class`, `data-*`, aria, ...) and children (text or elements). */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number | boolean | null | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue
    el.setAttribute(k, v === true ? '' : String(v))
  }
  append(el, children)
  return el
}

export function append(el: Element, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue
    el.append(typeof c === 'number' ? String(c) : c)
  }
}

/** Replaces an element's children. */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren()
  append(el, children)
}

/** The element of an id the page has (its markup is the package's: a missing one is a bug). */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id)
  if (!el) throw new Error(`the page has no #${id}`)
  return el as T
}

/** A number as the page writes it: 12,345. */
export const num = (n: number): string => n.toLocaleString('en-US')

/** A number short: 95M for 95,000,000 (below a million as num writes it). */
export const short = (n: number): string =>
  Math.abs(n) < 1e6 ? num(n) : n.toLocaleString('en-US', {notation: 'compact', maximumFractionDigits: 1})
