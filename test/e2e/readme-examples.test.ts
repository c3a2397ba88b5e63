/**
 * The README's `provider list` and `candidates` examples, read from README.md itself and run on
 * the example cloud built as the README says (`db init`, `apply fixtures/cloud.yaml`, `topology
 * apply fixtures/cloud-layout.yaml`): each finds something, none prints an empty table.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {ROOT, placemat} from '../helpers/cli.js'

const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8')

/** A shell line's words: quotes taken off, a `#` comment dropped (enough for the README's examples). */
function words(line: string): string[] {
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

/** The examples that stand alone: no variable, pipe or other endpoint. */
const examples = README.replace(/\\\n\s*/g, '')
  .split('\n')
  .filter((l) => /^placemat (provider list|candidates) --/.test(l) && !/[$|]|--(os-cloud|db|url)\b/.test(l))

let dir: string
let db: string[]

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-readme-'))
  db = ['--db', path.join(dir, 'cloud.db')]
  for (const args of [['db', 'init'], ['apply', 'fixtures/cloud.yaml'], ['topology', 'apply', 'fixtures/cloud-layout.yaml']]) {
    const r = await placemat([...args, ...db])
    expect(r.code, `placemat ${args.join(' ')}: ${r.stderr}`).toBe(0)
  }
})

afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

describe("the README's examples on its example cloud", () => {
  it('are found in the README', () => {
    expect(examples.length).toBeGreaterThanOrEqual(4)
  })

  it.each(examples)('%s', async (line) => {
    const r = await placemat([...words(line).slice(1), ...db])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).not.toMatch(/no candidates/)
    // The header and at least one row.
    expect(r.stdout.trim().split('\n').length, r.stdout).toBeGreaterThan(1)
  })

  it('say where the admin token is when PLACEMAT_HOME is set', () => {
    const quickStart = README.slice(README.indexOf('## Quick start'), README.indexOf('## The daemon'))
    expect(quickStart).toContain('$PLACEMAT_HOME/admin-token')
  })
})
