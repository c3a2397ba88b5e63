/**
 * `placemat provder list`: oclif's own answer is "command provder:list not found". Say which
 * command was meant (the closest by edit distance, arguments after it left out), on stderr, and
 * exit 2 like any usage error.
 */
import type {Hook} from '@oclif/core'
import {ExitCode} from '../failure.js'

/** Levenshtein distance, two rows at a time. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({length: b.length + 1}, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const cur = [i]
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    prev = cur
  }
  return prev[b.length]
}

/** The names closest to what was typed, best first (none when nothing is close). */
export function closestNames(want: string, names: string[], most = 3): string[] {
  const scored = names.map((id) => ({id, d: editDistance(want, id)}))
  const limit = Math.max(2, Math.floor(want.length / 3))
  const near = scored.filter((s) => s.d <= limit).sort((a, b) => a.d - b.d || a.id.localeCompare(b.id))
  // Only the best and what is almost as good: one wrong letter should not suggest five commands.
  return near
    .filter((s) => s.d <= near[0].d + 1)
    .slice(0, most)
    .map((s) => s.id)
}

/**
 * The commands (ids with spaces) closest to what was typed, best first. Arguments may follow
 * the command (`provider shwo cn-01`): the words are tried from all of them down to the first.
 */
export function closestCommands(typed: string, ids: string[], most = 3): string[] {
  const words = typed.split(/[: ]/).filter(Boolean)
  const spaced = ids.map((id) => id.replace(/:/g, ' '))
  for (let n = words.length; n >= 1; n--) {
    const near = closestNames(words.slice(0, n).join(' '), spaced, most)
    if (near.length) return near
  }
  return []
}

/**
 * The command an operator typed, without the arguments and flags after it: the words before the
 * first flag, each while it is (or is near) a word some command has at that place after the
 * words before it (`provider shwo cn-01 --db x`: `provider shwo`); the first word always.
 */
export function typedCommand(typed: string, ids: string[]): string {
  const words = typed.split(/[: ]/).filter(Boolean)
  const flag = words.findIndex((w) => w.startsWith('-'))
  const given = flag < 0 ? words : words.slice(0, flag)
  let commands = ids.map((id) => id.split(':'))
  let n = 0
  for (; n < given.length; n++) {
    commands = commands.filter((c) => c.length > n && (c[n] === given[n] || closestNames(given[n], [c[n]]).length > 0))
    if (!commands.length) break
  }
  return given.slice(0, Math.max(n, 1)).join(' ')
}

const hook: Hook<'command_not_found'> = async (opts) => {
  const ids = opts.config.commands.filter((c) => !c.hidden).map((c) => c.id)
  const typed = [opts.id.replace(/:/g, ' '), ...(opts.argv ?? [])].join(' ')
  const near = closestCommands(typed, ids)
  const hint = near.length
    ? `; did you mean ${near.map((c) => `\`${opts.config.bin} ${c}\``).join(' or ')}?`
    : `; see \`${opts.config.bin} --help\``
  process.stderr.write(`${opts.config.bin}: command ${typedCommand(typed, ids) || opts.id.replace(/:/g, ' ')} not found${hint}\n`)
  process.exit(ExitCode.USAGE)
}

export default hook
