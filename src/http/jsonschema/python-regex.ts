/** Python's `re` patterns ("pattern", "patternProperties") on JavaScript's RegExp. */

const regexCache = new Map<string, RegExp>()

/**
 * Compiles a Python `re` pattern into a JS RegExp usable for `re.search`.
 * Handles the differences that matter for simple patterns: `\Z`, `\A` and
 * `(?P<name>...)` groups. `$` is kept strict (end of string only): see the header.
 */
export function pyRegex(pattern: string): RegExp {
  const cached = regexCache.get(pattern)
  if (cached) return cached
  let out = ''
  let inClass = false
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]
    if (ch === '\\') {
      const next = pattern[i + 1] ?? ''
      i++
      if (!inClass && next === 'Z') out += '$'
      else if (!inClass && next === 'A') out += '^'
      else out += '\\' + next
      continue
    }
    if (inClass) {
      if (ch === ']') inClass = false
      out += ch
      continue
    }
    if (ch === '[') {
      inClass = true
      out += ch
      // a leading ']' (or '^]') is literal in Python
      if (pattern[i + 1] === '^') out += pattern[++i]
      if (pattern[i + 1] === ']') {
        out += '\\]'
        i++
      }
      continue
    }
    if (ch === '$') {
      // Deliberately stricter than Python: no match before a final newline (see the header).
      out += '$'
      continue
    }
    if (ch === '(' && pattern.startsWith('(?P<', i)) {
      out += '(?<'
      i += 3
      continue
    }
    out += ch
  }
  let re: RegExp
  try {
    re = new RegExp(out, 'u')
  } catch {
    re = new RegExp(out)
  }
  regexCache.set(pattern, re)
  return re
}

export const reSearch = (pattern: string, s: string) => pyRegex(pattern).test(s)
