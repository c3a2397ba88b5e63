/**
 * What a command loads shapes its start: the bundle is CommonJS (scripts/build-cli.mjs, toCommonJS)
 * so that a command loading no ES module never starts Node's ES module loader. One ES module in
 * the way (a chunk left an ES module, an import() of a module by name) would cost every start
 * some milliseconds without changing any answer.
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
  `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(listed)}, JSON.stringify({builtins: process.moduleLoadList, files: Object.keys(require.cache)})))\n`,
)

async function modulesOf(args: string[]): Promise<{builtins: string[]; files: string[]}> {
  fs.rmSync(listed, {force: true})
  const r = await placemat(args, {env: {NODE_OPTIONS: `--require ${preload}`}})
  expect(r.code, `placemat ${args.join(' ')}: ${r.stderr}`).toBe(0)
  return JSON.parse(fs.readFileSync(listed, 'utf8'))
}

describe('a command of placemat’s own', () => {
  it('starts without the ES module loader: --version, db init and provider list on a file', async () => {
    const db = path.join(dir, 'p.db')
    for (const args of [['--version'], ['db', 'init', '--db', db], ['provider', 'list', '--db', db]]) {
      const {builtins, files} = await modulesOf(args)
      expect(
        builtins.filter((m) => m.includes('modules/esm/module_job')),
        `placemat ${args.join(' ')}`,
      ).toEqual([])
      const bundle = files.filter((f) => f.includes(`${path.sep}dist${path.sep}cli${path.sep}`))
      expect(bundle.length, `placemat ${args.join(' ')}`).toBeGreaterThan(1)
      expect(bundle.filter((f) => !f.endsWith('.cjs'))).toEqual([])
    }
  })
})
