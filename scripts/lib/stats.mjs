// Summaries of measured times.

/** The p-th percentile (nearest rank) of `xs`; null when there is none. */
export const pct = (xs, p) => {
  if (!xs.length) return null
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]
}

/** Milliseconds for a table: whole from 100 up, one decimal below; — for none. */
export const fmtMs = (v) => (v === null || v === undefined ? '—' : v >= 100 ? v.toFixed(0) : v.toFixed(1))

/** A number with `digits` decimals; — for none or one that is not finite. */
export const fmtFixed = (v, digits = 2) => (v === null || v === undefined || !Number.isFinite(v) ? '—' : v.toFixed(digits))
