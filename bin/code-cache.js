// V8's code cache for the bundle's chunks (dist/cli/*.cjs). The build makes it (dist/cli/code-cache:
// scripts/build-cli.mjs runs a few commands with PLACEMAT_MAKE_CODE_CACHE=1), so a chunk compiled
// from it skips parsing and compiling what those commands ran: some tenth of a command's start.
// Made by one Node (code-cache/node names it): under another it is not read; under other V8 flags
// V8 refuses it and the chunk is compiled as without it. Never written by a command's run.
const Module = require('node:module')
const fs = require('node:fs')
const path = require('node:path')
const vm = require('node:vm')

/** What was compiled from the cache and what was not, for a test to read at exit. */
const REPORT = Symbol.for('placemat.codeCache')

/** Compiles the chunks under `chunks` from the code cache beside them; in the build, also makes it. */
function useCodeCache(chunks) {
  const dir = path.join(chunks, 'code-cache')
  const making = process.env.PLACEMAT_MAKE_CODE_CACHE === '1'
  // The daemon runs with a V8 flag (its young generation), under which V8 would refuse the cache.
  // PLACEMAT_NO_CODE_CACHE=1: compiled as without it (to time it, or to rule it out).
  if (!making && (process.execArgv.length > 0 || process.env.PLACEMAT_NO_CODE_CACHE === '1')) return
  if (!making && readText(path.join(dir, 'node')) !== builtBy()) return
  const report = {used: [], refused: []}
  process[REPORT] = report
  const compiled = []
  let collecting = making
  let refusing = false
  const prefix = chunks + path.sep
  const compile = Module.prototype._compile
  Module.prototype._compile = function compileFromCache(content, filename) {
    if (!filename.startsWith(prefix) || !filename.endsWith('.cjs')) return compile.call(this, content, filename)
    const file = path.join(dir, `${path.basename(filename)}.v8`)
    const cachedData = refusing ? undefined : readBytes(file)
    const script = new vm.Script(Module.wrap(content), {filename, cachedData})
    // Refused once, refused for all (V8 flags given some other way, NODE_OPTIONS): not read again.
    if (cachedData && script.cachedDataRejected) refusing = true
    ;(cachedData && !script.cachedDataRejected ? report.used : report.refused).push(path.basename(filename))
    if (collecting) compiled.push({file, script})
    const run = script.runInThisContext()
    return run.call(this.exports, this.exports, Module.createRequire(filename), this, filename, path.dirname(filename))
  }
  if (!making) return
  // What ran so far, written before the V8 flags change (a --db command's heap flag), which
  // would make V8 refuse it at the next start, or else at exit.
  const write = () => {
    fs.mkdirSync(dir, {recursive: true})
    fs.writeFileSync(path.join(dir, 'node'), builtBy())
    for (const {file, script} of compiled.splice(0)) fs.writeFileSync(file, script.createCachedData())
  }
  const v8 = require('node:v8')
  const setFlags = v8.setFlagsFromString
  v8.setFlagsFromString = (flags) => {
    write()
    collecting = false
    setFlags.call(v8, flags)
  }
  process.on('exit', write)
}

/** The Node a cache is for: V8 reads only what its own version wrote. */
const builtBy = () => `${process.version} ${process.arch}`

function readBytes(file) {
  try {
    return fs.readFileSync(file)
  } catch {
    return undefined
  }
}

function readText(file) {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch {
    return undefined
  }
}

module.exports = {useCodeCache}
