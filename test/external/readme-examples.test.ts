/**
 * The README's `provider list` and `candidates` examples, read from README.md itself and run on
 * the example cloud built as the README says (`db init`, `apply fixtures/cloud.yaml`, `topology
 * apply fixtures/cloud-layout.yaml`): each finds something, none prints an empty table. Its
 * haproxy.cfg passes `haproxy -c` without a warning (where haproxy and openssl are installed).
 */
import {execFile} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {makeCa, opensslAvailable, serverCert} from '../helpers/certs.js'
import {ROOT, placemat} from '../helpers/cli.js'
import {HAPROXY, haproxyAvailable} from '../helpers/haproxy.js'

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

  it.skipIf(!haproxyAvailable || !opensslAvailable)('give haproxy a configuration it takes without a warning', async () => {
    const block = README.match(/^# haproxy\.cfg:.*\n(?:(?!```)[^\n]*\n)*/m)
    expect(block, 'the haproxy.cfg block').not.toBeNull()
    // The certificate the README names, made here.
    const ca = makeCa(dir)
    const cfg = block![0].replace('/etc/haproxy/cloud.example.pem', serverCert(ca, 'cloud').both)
    expect(cfg).not.toContain('/etc/haproxy/')
    const file = path.join(dir, 'haproxy.cfg')
    fs.writeFileSync(file, cfg)
    const checked = await new Promise<{code: number; text: string}>((resolve) =>
      execFile(HAPROXY, ['-c', '-f', file], (err, stdout, stderr) =>
        resolve({code: err ? Number(err.code ?? 1) : 0, text: stdout + stderr}),
      ),
    )
    expect(checked.code, checked.text).toBe(0)
    expect(checked.text).not.toMatch(/WARNING|ALERT/)
    expect(checked.text).toMatch(/Configuration file is valid/)
  })
})
