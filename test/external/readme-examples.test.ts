/**
 * The `provider list` and `candidates` examples of the README and the guides in docs/, read from
 * the Markdown files themselves and run on the example cloud built as they say (`db init`, `apply
 * fixtures/cloud.yaml`, `topology apply fixtures/cloud-layout.yaml`): each finds something, none
 * prints an empty table. The haproxy.cfg of the guide behind a balancer passes `haproxy -c` without
 * a warning (where haproxy and openssl are installed).
 */
import {execFile} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {makeCa, opensslAvailable, serverCert} from '../helpers/certs.js'
import {ROOT, placemat} from '../helpers/cli.js'
import {HAPROXY, haproxyAvailable} from '../helpers/haproxy.js'

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

const DOCS = markdownFiles().map((file) => ({file, text: fs.readFileSync(path.join(ROOT, file), 'utf8')}))
const README = DOCS[0].text

/** A shell line's words: quotes taken off, a `#` comment dropped (enough for the docs' examples). */
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

/** The examples that stand alone: no variable, pipe or other endpoint; each with the file it is in. */
const examples = DOCS.flatMap(({file, text}) =>
  text
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .filter((l) => /^placemat (provider list|candidates) --/.test(l) && !/[$|]|--(os-cloud|db|url)\b/.test(l))
    .map((line) => ({file, line})),
)

/** The haproxy.cfg blocks (a code block starting `# haproxy.cfg:`), each with the file it is in. */
const haproxyConfigs = DOCS.flatMap(({file, text}) => {
  const block = text.match(/^# haproxy\.cfg:.*\n(?:(?!```)[^\n]*\n)*/m)
  return block ? [{file, block: block[0]}] : []
})

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

  it.skipIf(!haproxyAvailable || !opensslAvailable)(
    `give haproxy a configuration it takes without a warning (${haproxyConfigs.map((c) => c.file).join(', ') || 'none found'})`,
    async () => {
      expect(
        haproxyConfigs.map((c) => c.file),
        'one haproxy.cfg block in the docs',
      ).toHaveLength(1)
      const {file: source, block} = haproxyConfigs[0]
      // The certificate the configuration names, made here.
      const ca = makeCa(dir)
      const cfg = block.replace('/etc/haproxy/cloud.example.pem', serverCert(ca, 'cloud').both)
      expect(cfg).not.toContain('/etc/haproxy/')
      const file = path.join(dir, 'haproxy.cfg')
      fs.writeFileSync(file, cfg)
      const checked = await new Promise<{code: number; text: string}>((resolve) =>
        execFile(HAPROXY, ['-c', '-f', file], (err, stdout, stderr) =>
          resolve({code: err ? Number(err.code ?? 1) : 0, text: stdout + stderr}),
        ),
      )
      expect(checked.code, `${source}: ${checked.text}`).toBe(0)
      expect(checked.text).not.toMatch(/WARNING|ALERT/)
      expect(checked.text).toMatch(/Configuration file is valid/)
    },
  )
})
