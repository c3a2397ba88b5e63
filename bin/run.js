#!/usr/bin/env node
// CommonJS (bin/package.json), as is the bundle it loads: a command that loads no ES module never
// starts Node's ES module loader (scripts/build-cli.mjs, toCommonJS). No V8 flag on the #! line:
// any would cost each command its share of Node's code cache (src/daemon/node-flags.ts); the
// daemon is given its young generation where it is started.
const {readFileSync, statSync} = require('node:fs')
const path = require('node:path')

const root = path.join(__dirname, '..')
const bundle = path.join(root, 'dist', 'cli', 'index.cjs')
const mtime = (file) => statSync(file, {throwIfNoEntry: false})?.mtimeMs
const pjson = () => JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'))

/**
 * Whether argv runs one of placemat's own commands (its words naming one in `commands`) or asks
 * the version, without asking for help: then oclif need not find and read its two plugins (the
 * `help` and `autocomplete` commands), some 10 ms of each start, nor the manifest help is printed
 * from (it reads the build's run manifest, the commands without their help). Anything else loads
 * them.
 */
function ownCommand(commands, argv) {
  const flags = argv.slice(0, argv.includes('--') ? argv.indexOf('--') : argv.length)
  if (flags.some((a) => a === '--help' || a === '-h')) return false
  if (argv.length === 1 && argv[0] === '--version') return true
  const words = []
  for (const a of argv) {
    if (a.startsWith('-')) break
    words.push(a)
  }
  for (let n = words.length; n > 0; n--) if (Object.hasOwn(commands, words.slice(0, n).join(':'))) return true
  return false
}

// dist/cli/index.cjs (npm run build) is @oclif/core and the command table in one bundle. If tsc
// alone has compiled since it was made (its dist/.tsbuildinfo is newer) or there is none, run
// tsc's dist/commands with @oclif/core from node_modules instead: slower, never stale.
async function main() {
  const built = mtime(bundle)
  if (built !== undefined && built >= (mtime(path.join(root, 'dist', '.tsbuildinfo')) ?? 0)) {
    // The chunks' import() of an ES module (scripts/build-cli.mjs, toCommonJS): this file's.
    globalThis[Symbol.for('placemat.import')] = (specifier) => import(specifier)
    require('./code-cache.js').useCodeCache(path.dirname(bundle))
    const {execute, COMMANDS} = require(bundle)
    if (ownCommand(COMMANDS, process.argv.slice(2))) {
      const own = pjson()
      await execute({loadOptions: {root, pjson: {...own, oclif: {...own.oclif, plugins: [], manifestFile: 'dist/cli/run.manifest.json'}}}})
    } else await execute({loadOptions: {root}})
  } else {
    const {execute} = await import('@oclif/core')
    const own = pjson()
    await execute({loadOptions: {root, pjson: {...own, oclif: {...own.oclif, commands: './dist/commands'}}}})
  }
}

main().catch((error) => {
  // As an ES module's top-level await did: the error printed, exit status 1.
  console.error(error)
  process.exitCode = 1
})
