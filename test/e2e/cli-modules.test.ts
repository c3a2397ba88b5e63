/**
 * What a command loads, and how, shapes its start: the bundle is CommonJS (scripts/build-cli.mjs,
 * toCommonJS) so that a command loading no ES module never starts Node's ES module loader, and its
 * chunks are compiled from the V8 code cache the build made (bin/code-cache.js). One ES module in
 * the way, or a cache V8 refuses, would cost every start some milliseconds without changing any
 * answer.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {placemat} from '../helpers/cli.js'

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-cli-modules-'))
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

// Preloaded into the command: at exit, Node's built-in modules it loaded and the files in its module cache.
const listed = path.join(dir, 'modules.json')
const preload = path.join(dir, 'record-modules.cjs')
fs.writeFileSync(
  preload,
  `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(listed)}, JSON.stringify({builtins: process.moduleLoadList, files: Object.keys(require.cache), codeCache: process[Symbol.for('placemat.codeCache')]})))\n`,
)

interface Loaded {
  builtins: string[]
  files: string[]
  /** The chunks compiled from V8's code cache the build made, and the others (bin/code-cache.js). */
  codeCache?: {used: string[]; refused: string[]}
}

async function modulesOf(args: string[]): Promise<Loaded> {
  fs.rmSync(listed, {force: true})
  const r = await placemat(args, {env: {NODE_OPTIONS: `--require ${preload}`}})
  expect(r.code, `placemat ${args.join(' ')}: ${r.stderr}`).toBe(0)
  return JSON.parse(fs.readFileSync(listed, 'utf8'))
}

describe('a command of placemat’s own', () => {
  it('starts without the ES module loader: --version, db init and provider list on a file', async () => {
    const db = path.join(dir, 'p.db')
    for (const args of [['--version'], ['db', 'init', '--db', db], ['provider', 'list', '--db', db]]) {
      const {builtins, files, codeCache} = await modulesOf(args)
      expect(
        builtins.filter((m) => m.includes('modules/esm/module_job')),
        `placemat ${args.join(' ')}`,
      ).toEqual([])
      const bundle = files.filter((f) => f.includes(`${path.sep}dist${path.sep}cli${path.sep}`))
      expect(bundle.length, `placemat ${args.join(' ')}`).toBeGreaterThan(1)
      expect(bundle.filter((f) => !f.endsWith('.cjs'))).toEqual([])
      // The build ran these commands to make the cache: the chunks they load come from it, but
      // for those a --db command loads after it sets its heap's V8 flag (which V8 then refuses).
      expect(codeCache?.used.length, `placemat ${args.join(' ')}`).toBeGreaterThan(0)
      if (args[0] === '--version' || args[0] === 'db') expect(codeCache?.refused, `placemat ${args.join(' ')}`).toEqual([])
      else expect(codeCache!.refused.length).toBeLessThan(codeCache!.used.length / 4)
    }
  })

  it('compiles its chunks as without the code cache when asked, with the same answer', async () => {
    const db = path.join(dir, 'q.db')
    expect((await placemat(['db', 'init', '--db', db])).code).toBe(0)
    const [cached, compiled] = await Promise.all([
      placemat(['provider', 'list', '--db', db, '-f', 'json']),
      placemat(['provider', 'list', '--db', db, '-f', 'json'], {env: {PLACEMAT_NO_CODE_CACHE: '1'}}),
    ])
    expect(compiled).toEqual(cached)
    const {codeCache} = await modulesOf(['--version'])
    expect(codeCache?.used.length).toBeGreaterThan(0)
    fs.rmSync(listed, {force: true})
    const r = await placemat(['--version'], {env: {NODE_OPTIONS: `--require ${preload}`, PLACEMAT_NO_CODE_CACHE: '1'}})
    expect(r.code).toBe(0)
    expect(JSON.parse(fs.readFileSync(listed, 'utf8')).codeCache).toBeUndefined()
  })
})
