/** Which error `jsonschema.validate` raises (best_match), and str() of it. */
import {pformat, pyStrRepr} from './python-repr.js'
import {isType} from './values.js'
import {isObject, type PathItem, type SchemaError} from './types.js'

const WEAK = new Set(['anyOf', 'oneOf'])

function matchesType(err: SchemaError): boolean {
  if (!isObject(err.schema) || !('type' in err.schema)) return false
  const t = err.schema.type
  try {
    if (typeof t === 'string') return isType(err.instance, t)
    if (Array.isArray(t)) return t.some((x) => isType(err.instance, String(x)))
  } catch {
    return false
  }
  return false
}

/** jsonschema.exceptions.relevance, as a tuple of numbers (bigger is more relevant). */
function relevance(err: SchemaError): number[] {
  return [-err.path.length, WEAK.has(err.keyword ?? '') ? 0 : 1, 0, matchesType(err) ? 0 : 1]
}

function cmpKey(a: number[], b: number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1
  return 0
}

/** jsonschema.exceptions.best_match (4.10.3). */
export function bestMatch(errors: SchemaError[]): SchemaError | null {
  if (!errors.length) return null
  let best = errors[0]
  let bestKey = relevance(best)
  for (const e of errors.slice(1)) {
    const k = relevance(e)
    if (cmpKey(k, bestKey) > 0) {
      best = e
      bestKey = k
    }
  }
  while (best.context.length) {
    // heapq.nsmallest(2, ...) is stable: the first two in (key, position) order
    const sorted = best.context.map((e, i) => ({e, i, k: relevance(e)})).sort((a, b) => cmpKey(a.k, b.k) || a.i - b.i)
    if (sorted.length >= 2 && cmpKey(sorted[0].k, sorted[1].k) === 0) return best
    best = sorted[0].e
  }
  return best
}

function formatAsIndex(container: string, indices: PathItem[]): string {
  if (!indices.length) return container
  return `${container}[${indices.map((i) => (typeof i === 'number' ? String(i) : pyStrRepr(i))).join('][')}]`
}

const indentLines = (text: string) =>
  text
    .split('\n')
    .map((l) => (l.trim() ? '    ' + l : l))
    .join('\n')

/** str(ValidationError) as python-jsonschema 4.10 renders it. */
export function formatError(err: SchemaError): string {
  const schemaPath = formatAsIndex('schema', err.schemaPath.slice(0, -1))
  const instancePath = formatAsIndex('instance', err.path)
  const keyword = err.keyword === null ? 'None' : pyStrRepr(err.keyword)
  return (
    `${err.message}\n\n` +
    `Failed validating ${keyword} in ${schemaPath}:\n` +
    `${indentLines(pformat(err.schema, 72))}\n\n` +
    `On ${instancePath}:\n` +
    `${indentLines(pformat(err.instance, 72))}`
  ).trimEnd()
}
