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
  if (!making && read(path.join(dir, 'node'), 'utf8') !== builtBy()) return
  const report = {used: [], refused: []}
  process[REPORT] = report
  const compiled = []
  let collecting = making
  let refusing = false
  const prefix = chunks + path.sep
  const compile = Module.prototype._compile
  Module.prototype._compile = function compileFromCache(content, filename) {
    if (!filename.startsWith(prefix) || !filename.endsWith('.cjs')) return compile.call(this, content, filename)
    const file = cacheFile(dir, filename)
    const cachedData = refusing ? undefined : read(file)
    const script = chunkScript(content, filename, cachedData)
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

/**
 * In the build, after the commands it ran: the cache of every chunk none of them loaded, compiled
 * and not run (its module's body then, not the functions in it).
 */
function cacheTheRest(chunks) {
  const dir = path.join(chunks, 'code-cache')
  for (const name of fs.readdirSync(chunks).filter((n) => n.endsWith('.cjs'))) {
    const filename = path.join(chunks, name)
    const file = cacheFile(dir, filename)
    if (!fs.existsSync(file)) fs.writeFileSync(file, chunkScript(fs.readFileSync(filename, 'utf8'), filename).createCachedData())
  }
}

/** A chunk as Node's CommonJS loader wraps it: V8 takes a cache only for the very same text. */
const chunkScript = (content, filename, cachedData) => new vm.Script(Module.wrap(content), {filename, cachedData})

/** Where the cache of the chunk `filename` is kept. */
const cacheFile = (dir, filename) => path.join(dir, `${path.basename(filename)}.v8`)

/** The Node a cache is for: V8 reads only what its own version wrote. */
const builtBy = () => `${process.version} ${process.arch}`

/** The file's bytes (or text, given an encoding); undefined when there is none. */
function read(file, encoding) {
  try {
    return fs.readFileSync(file, encoding)
  } catch {
    return undefined
  }
}

module.exports = {useCodeCache, cacheTheRest}
