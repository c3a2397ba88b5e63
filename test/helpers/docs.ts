/** The README and the guides in docs/, as the tests that run or check their examples read them. */
import fs from 'node:fs'
import path from 'node:path'
import {ROOT} from './cli.js'

/** The Markdown files, by path from the checkout: README.md, then docs/ (sorted). */
function markdownFiles(): string[] {
  const walk = (dir: string): string[] =>
    fs
      .readdirSync(path.join(ROOT, dir), {withFileTypes: true})
      .flatMap((e) => (e.isDirectory() ? walk(path.posix.join(dir, e.name)) : e.name.endsWith('.md') ? [path.posix.join(dir, e.name)] : []))
  // docs/commands.md is written from the commands' help, whose examples are not written for the example cloud.
  return [
    'README.md',
    ...walk('docs')
      .filter((f) => f !== 'docs/commands.md')
      .sort(),
  ]
}

export const DOCS: Array<{file: string; text: string}> = markdownFiles().map((file) => ({
  file,
  text: fs.readFileSync(path.join(ROOT, file), 'utf8'),
}))
export const README = DOCS[0].text

/** A shell line's words: quotes taken off, a `#` comment dropped (enough for the docs' examples). */
export function words(line: string): string[] {
  const out: string[] = []
  let word: string | undefined
  for (let i = 0; i < line.length; i++) {
    const c = line[i]
    if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1)
      word = (word ?? '') + line.slice(i + 1, end)
      i = end
    } else if (c === ' ') {
      if (word !== undefined) out.push(word)
      word = undefined
    } else if (c === '#' && word === undefined) break
    else word = (word ?? '') + c
  }
  if (word !== undefined) out.push(word)
  return out
}
