/**
 * The `provider list` and `candidates` examples of the README and the guides in docs/, read from
 * the Markdown files themselves and run on the example cloud built as they say (`db init`, `apply
 * fixtures/cloud.yaml`, `topology apply fixtures/cloud-layout.yaml`): each finds something, none
 * prints an empty table. (The balancer guide's haproxy.cfg is checked in test/external/docs-haproxy.test.ts.)
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {placemat} from '../helpers/cli.js'
import {DOCS, README, words} from '../helpers/docs.js'

/** The examples that stand alone: no variable, pipe or other endpoint; each with the file it is in. */
const examples = DOCS.flatMap(({file, text}) =>
  text
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .filter((l) => /^placemat (provider list|candidates) --/.test(l) && !/[$|]|--(os-cloud|db|url)\b/.test(l))
    .map((line) => ({file, line})),
)

let dir: string
let db: string[]

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-readme-'))
  db = ['--db', path.join(dir, 'cloud.db')]
  for (const args of [
    ['db', 'init'],
    ['apply', 'fixtures/cloud.yaml'],
    ['topology', 'apply', 'fixtures/cloud-layout.yaml'],
  ]) {
    const r = await placemat([...args, ...db])
    expect(r.code, `placemat ${args.join(' ')}: ${r.stderr}`).toBe(0)
  }
})

afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

describe("the README's and the guides' examples on their example cloud", () => {
  it('are found in the README and the guides', () => {
    expect(examples.length).toBeGreaterThanOrEqual(4)
    expect(examples.some((e) => e.file === 'README.md')).toBe(true)
  })

  for (const {file, line} of examples)
    it(`${file}: ${line}`, async () => {
      const r = await placemat([...words(line).slice(1), ...db])
      expect(r.code, r.stderr).toBe(0)
      expect(r.stderr).not.toMatch(/no candidates/)
      // The header and at least one row.
      expect(r.stdout.trim().split('\n').length, r.stdout).toBeGreaterThan(1)
    })

  it('say where the admin token is when PLACEMAT_HOME is set', () => {
    const start = README.indexOf('## Quick start')
    expect(start).toBeGreaterThanOrEqual(0)
    const end = README.indexOf('\n## ', start + 1)
    const quickStart = README.slice(start, end < 0 ? undefined : end)
    expect(quickStart).toContain('$PLACEMAT_HOME/admin-token')
  })
})
