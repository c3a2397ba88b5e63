/**
 * A flavor file: what `openstack flavor list --long -f json` or `openstack flavor show -f json`
 * prints (a list, or one flavor), or a YAML list of the same fields (name, vcpus, ram, disk,
 * ephemeral, swap, properties, member_of). Properties as an object, or as osc prints them in a
 * table: `key='value', key2='value2'`. A file that does not parse is refused with its line and
 * column (FlavorFileError).
 */
import type {Flavor} from './flavors.js'
import {yaml} from '../yaml.js'

/** A flavor file that cannot be used, with where and why. */
export class FlavorFileError extends Error {}

const refused = (message: string) => new FlavorFileError(message)

/** The flavors in `text`, read from `where` (for the messages). */
export function parseFlavors(text: string, where: string): Flavor[] {
  const value = /^\s*[[{]/.test(text) ? parseJson(text, where) : parseYaml(text, where)
  const list = Array.isArray(value)
    ? value
    : isObject(value) && Array.isArray(value.flavors)
      ? value.flavors
      : isObject(value)
        ? [value]
        : null
  if (!list) throw refused(`${where}: a list of flavors, or one flavor, expected`)
  const flavors = list.map((raw, i) => flavorOf(raw, `${where}: flavor ${i + 1}`))
  const seen = new Set<string>()
  for (const f of flavors) {
    if (seen.has(f.name)) throw refused(`${where}: flavor ${f.name} is given twice`)
    seen.add(f.name)
  }
  return flavors
}

/** JSON as osc prints it (YAML would take some broken JSON as text). */
function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text)
  } catch (err) {
    const message = (err as Error).message
    const at = /position (\d+)/.exec(message)
    const offset = at ? Number(at[1]) : jsonErrorOffset(text)
    const before = text.slice(0, offset).split('\n')
    const what = message.replace(/ in JSON at position \d+.*$/, '').replace(/, ".*" is not valid JSON$/s, '')
    throw refused(`${where}:${before.length}:${before[before.length - 1].length + 1}: ${what}`)
  }
}

/** Where JSON.parse stopped in `text` (Node 20 does not always say): a scan of JSON's grammar. */
function jsonErrorOffset(text: string): number {
  let i = 0
  const ws = () => {
    while (i < text.length && ' \t\r\n'.includes(text[i])) i++
  }
  const fail = (): never => {
    throw i
  }
  const value = (): void => {
    ws()
    const c = text[i]
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']'
      i++
      ws()
      if (text[i] === close) return void i++
      for (;;) {
        if (c === '{') {
          ws()
          if (text[i] !== '"') fail()
          value()
          ws()
          if (text[i++] !== ':') i--, fail()
        }
        value()
        ws()
        if (text[i] === ',') i++
        else if (text[i] === close) return void i++
        else fail()
      }
    }
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++
      if (i >= text.length) fail()
      return void i++
    }
    const m = /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i))
    if (!m) fail()
    i += m![0].length
  }
  try {
    value()
    ws()
    return i
  } catch (at) {
    return typeof at === 'number' ? at : 0
  }
}

function parseYaml(text: string, where: string): unknown {
  const doc = yaml().parseDocument(text, {prettyErrors: false})
  const bad = doc.errors[0]
  if (bad) {
    const at = bad.linePos?.[0]
    throw refused(`${where}${at ? `:${at.line}:${at.col}` : ''}: ${bad.message.split('\n')[0]}`)
  }
  return doc.toJS() as unknown
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The field of `raw` under any of `names` (osc's headings or the flavor API's keys), case aside. */
function field(raw: Record<string, unknown>, ...names: string[]): unknown {
  const wanted = new Set(names.map((n) => n.toLowerCase()))
  for (const [k, v] of Object.entries(raw)) if (wanted.has(k.toLowerCase())) return v
  return undefined
}

/**
 * One flavor given as a value, as one entry of a file is (an API's inline flavor), refused as an
 * entry is; `where` names it in the messages ("flavor" gives "flavor NAME: RAM must be ...").
 */
export function flavorOfValue(raw: unknown, where: string): Flavor {
  return flavorOf(raw, where, '')
}

/** An entry: `where` names it by its place ("FILE: flavor 3"); once it has a name, by `prefix` and its name ("FILE: flavor c4"). */
function flavorOf(raw: unknown, where: string, prefix = where.replace(/flavor \d+$/, '')): Flavor {
  if (!isObject(raw)) throw refused(`${where}: an object expected`)
  const name = field(raw, 'name')
  if (typeof name !== 'string' || !name) throw refused(`${where}: no name`)
  const at = `${prefix}flavor ${name}`
  const amount = (label: string, required: boolean, ...names: string[]): number => {
    const v = field(raw, ...names)
    if ((v === undefined || v === null || v === '') && !required) return 0
    const n = typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v) : v
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0)
      throw refused(`${at}: ${label} must be a whole number >= 0, not ${JSON.stringify(v)}`)
    return n
  }
  return {
    name,
    vcpus: amount('VCPUs', true, 'vcpus'),
    ram: amount('RAM', true, 'ram'),
    disk: amount('Disk', false, 'disk'),
    ephemeral: amount('Ephemeral', false, 'ephemeral', 'OS-FLV-EXT-DATA:ephemeral'),
    swap: amount('Swap', false, 'swap'),
    properties: propertiesOf(field(raw, 'properties', 'extra_specs'), at),
    memberOf: memberOfOf(field(raw, 'member_of'), at),
  }
}

/** Properties as an object, or osc's `key='value', key2='value2'`. */
function propertiesOf(v: unknown, at: string): Record<string, string> {
  if (v === undefined || v === null || v === '') return {}
  if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, String(x)]))
  if (typeof v !== 'string') throw refused(`${at}: properties must be an object or key='value' pairs`)
  const out: Record<string, string> = {}
  const pair = /\s*([^=,\s][^=]*?)\s*=\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|([^,]*))\s*(?:,|$)/y
  let i = 0
  while (i < v.length) {
    pair.lastIndex = i
    const m = pair.exec(v)
    if (!m || m[0].length === 0) throw refused(`${at}: properties: cannot read ${JSON.stringify(v.slice(i))} (key='value', ... expected)`)
    out[m[1]] = (m[2] ?? m[3] ?? m[4] ?? '').trim()
    i = pair.lastIndex
  }
  return out
}

/** member_of: a list whose entries are aggregate uuids or `in:a,b` (any of them). */
function memberOfOf(v: unknown, at: string): string[][] | undefined {
  if (v === undefined || v === null) return undefined
  const entries = Array.isArray(v) ? v : [v]
  return entries.map((e) => {
    if (typeof e !== 'string' || !e.trim()) throw refused(`${at}: member_of entries are aggregate uuids or in:a,b`)
    const s = e.trim()
    return (s.startsWith('in:') ? s.slice(3) : s).split(',').map((x) => x.trim())
  })
}
