/**
 * What every JSON body must be before any handler sees it, beyond being JSON: not absurdly
 * deep (validators and error texts recurse), and made of strings that every backend stores
 * and answers back unchanged (no lone UTF-16 surrogates, no NUL, which PostgreSQL refuses).
 */
import {PlacementError} from '../core/errors.js'

/** Placement's bodies nest 7 levels at most (a batch of reshapes); 64 leaves room and stays cheap. */
export const MAX_JSON_DEPTH = 64

/** Parses a request body, with Placement's wording for malformed JSON. */
export function parseJsonBody(raw: string): unknown {
  let data: unknown
  try {
    data = JSON.parse(raw)
  } catch (err) {
    throw new PlacementError(
      400,
      `Malformed JSON: ${raw.trim() === '' ? 'Expecting value: line 1 column 1 (char 0)' : (err as Error).message}`,
    )
  }
  // Lone surrogates and NUL can only arrive as \u escapes: bodies without one skip the string checks.
  checkShape(data, raw.includes('\\u'))
  return data
}

/** One iterative walk: depth always, strings only when the body had \u escapes. */
function checkShape(root: unknown, checkStrings: boolean): void {
  const stack: Array<[unknown, number]> = [[root, 0]]
  while (stack.length) {
    const [value, depth] = stack.pop()!
    if (typeof value === 'string') {
      if (checkStrings) checkString(value)
      continue
    }
    if (typeof value !== 'object' || value === null) continue
    if (depth >= MAX_JSON_DEPTH) throw new PlacementError(400, `Malformed JSON: nested deeper than ${MAX_JSON_DEPTH} levels`)
    if (Array.isArray(value)) {
      for (const item of value) if (typeof item === 'object' || checkStrings) stack.push([item, depth + 1])
      continue
    }
    for (const [k, v] of Object.entries(value)) {
      if (checkStrings) checkString(k)
      if (typeof v === 'object' || checkStrings) stack.push([v, depth + 1])
    }
  }
}

// In unicode mode a surrogate pair is one code point, so this matches only a lone half.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u

function checkString(s: string): void {
  if (LONE_SURROGATE.test(s)) throw new PlacementError(400, 'Malformed JSON: a string holds a lone UTF-16 surrogate (\\ud800-\\udfff)')
  if (s.includes('\0')) throw new PlacementError(400, 'Malformed JSON: a string holds a NUL character (\\u0000)')
}
