// Summaries of measured times.

/** The p-th percentile (nearest rank) of `xs`; null when there is none. */
export const pct = (xs, p) => {
  if (!xs.length) return null
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]
}
