// Builds what bin/run.js loads: one ES module bundle of @oclif/core plus a table of the commands
// (dist/cli/index.js), each command in a chunk of its own that is imported only when it runs,
// and the oclif manifest that help and the command list are printed from.
//
// Why: loading @oclif/core file by file (some 130 CommonJS files with semver, minimatch, ...) was
// most of a command's start-up. oclif's "explicit" command discovery (package.json oclif.commands)
// imports the commands from one file, so oclif and the commands can be one bundle; the command
// classes in that table are stand-ins that import the real class on first run, so a run loads
// only its own command. Packages other than @oclif/core, kysely, fastify and prom-client (and
// what they use) stay in node_modules.
//
// The chunks are then made CommonJS (dist/cli/*.cjs: lib/cli-commonjs.mjs), and V8's code cache
// of them is made (lib/cli-code-cache.mjs).
//
// Run after tsc: the manifest is made, as `oclif manifest` made it, from the compiled commands
// in dist/commands.
import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import * as esbuild from 'esbuild'
import {makeCodeCache} from './lib/cli-code-cache.mjs'
import {ESM_BANNER, toCommonJS} from './lib/cli-commonjs.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const commandsDir = path.join(root, 'commands')
const outdir = path.join(root, 'dist', 'cli')
// Built beside it and then moved in place, so a CLI started meanwhile finds the old bundle or none.
const tmpdir = path.join(root, 'dist', `.cli-${process.pid}`)

/** Command ids as oclif's pattern discovery names them: topic dirs plus file name, `index` naming its dir. */
function commandFiles(dir, topics = []) {
  const out = []
  for (const entry of fs.readdirSync(dir, {withFileTypes: true}).sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.isDirectory()) {
      out.push(...commandFiles(path.join(dir, entry.name), [...topics, entry.name]))
      continue
    }
    if (!/\.tsx?$/.test(entry.name) || /\.(d|test|spec)\.tsx?$/.test(entry.name)) continue
    const name = entry.name.replace(/\.tsx?$/, '')
    const id = [...topics, ...(name === 'index' ? [] : [name])].join(':')
    out.push({id, file: path.join(dir, entry.name)})
  }
  return out
}

const commands = commandFiles(commandsDir)

// The stand-in takes the id and plugin oclif gives it over to the real class, then runs that.
const entrySource = `
import {execute, settings} from '@oclif/core'

// The bundle is compiled code: never look for TypeScript sources (oclif does when NODE_ENV is test or development).
settings.enableAutoTranspile = false

function commandClass(module) {
  if (typeof module.run === 'function') return module
  if (module.default && typeof module.default.run === 'function') return module.default
  return Object.values(module).find((c) => c && typeof c.run === 'function')
}

function lazy(load) {
  return class LazyCommand {
    /** The real class: its help reads its flags, whose defaults some work out when help is shown. */
    static async real() {
      return commandClass(await load())
    }

    static async run(argv, config) {
      const real = await this.real()
      real.id = this.id
      real.plugin = this.plugin
      return real.run(argv, config)
    }
  }
}

// The first fetch keeps WebAssembly on V8's baseline tier (Liftoff). fetch's HTTP parser is
// WebAssembly: V8 recompiles it with its optimizing tier on background threads, and Node waits for
// those to finish before it exits, some 50 ms after a command's first request; a command is over
// long before that would pay back. Set at the first fetch rather than at start because a changed
// V8 flag stops V8 using its code cache for what is compiled afterwards (+15 ms for a --db command).
// (require is the bundle's own, from its banner.)
const nodeFetch = globalThis.fetch
let baselineWasm = false
globalThis.fetch = function fetch(input, init) {
  if (!baselineWasm) {
    baselineWasm = true
    require('node:v8').setFlagsFromString('--liftoff-only')
  }
  return nodeFetch(input, init)
}

export const COMMANDS = {
${commands.map((c) => `  ${JSON.stringify(c.id)}: lazy(() => import(${JSON.stringify(c.file)})),`).join('\n')}
}

export {execute}
`

/** The packages @oclif/core depends on, directly or not: the ones the bundle carries. */
function dependencyClosure(name, from, seen = new Set()) {
  if (seen.has(name)) return seen
  let dir = from
  let pkgDir
  for (;;) {
    const candidate = path.join(dir, 'node_modules', name)
    if (fs.existsSync(path.join(candidate, 'package.json'))) {
      pkgDir = candidate
      break
    }
    const parent = path.dirname(dir)
    if (parent === dir) throw new Error(`cannot find ${name} from ${from}`)
    dir = parent
  }
  seen.add(name)
  const pjson = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'))
  for (const dep of Object.keys({...pjson.dependencies, ...pjson.optionalDependencies})) dependencyClosure(dep, pkgDir, seen)
  return seen
}
const bundled = dependencyClosure('@oclif/core', root)
// kysely too: its ES modules are some 280 files, and resolving and linking them one by one was a
// tenth of a daemon's start (an empty database: 2.11 s -> 1.87 s, paired). A bundled kysely is
// only ever handed this bundle's own objects: the command line has no other copy in it.
bundled.add('kysely')
// The daemon's server and metrics too: fastify, prom-client and theirs (pino, avvio, find-my-way,
// semver, @opentelemetry/api...) are some 300 CommonJS files. Read, wrapped and compiled one by
// one they were a sixth of a 100,000-provider daemon's start to first answer (1.62 -> 1.52 s,
// paired). Only a daemon and `--db` commands load their chunks.
for (const name of ['fastify', 'find-my-way', 'prom-client']) dependencyClosure(name, root, bundled)
// chalk (five ES modules, each resolved, read and linked on its own) colours every command's tables.
bundled.add('chalk')
// fastify's schema compilers (ajv, fast-json-stringify) are never loaded (http/app.ts): left out,
// and a daemon that loaded them after all would show it in its module cache.
for (const name of ['@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler']) bundled.delete(name)
const packageName = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/')

/**
 * Only @oclif/core, kysely, fastify, prom-client and their dependencies are bundled. Every other
 * package stays external: native ones (better-sqlite3), the database clients loaded only when
 * asked (pg, mysql2), the terminal's (ink) and those oclif may require at run time (typescript).
 */
const externals = {
  name: 'placemat-externals',
  setup(build) {
    // Not '#...': a package's own imports (chalk's #ansi-styles), resolved within that package.
    build.onResolve({filter: /^[^./#]/}, (args) => {
      if (args.path.startsWith('node:')) return {path: args.path, external: true}
      if (!bundled.has(packageName(args.path))) return {path: args.path, external: true}
      return undefined
    })
  },
}

/**
 * oclif reads its manifest (every command's flags, help and examples: some 470 KB) at every start,
 * though running a command needs only the ids and arguments. pjson.oclif.manifestFile, when
 * bin/run.js gives it (a command of placemat's own, no help asked), names the file oclif reads
 * instead: the run manifest, the same commands without what only help prints (some 35 KB).
 */
// biome-ignore lint/suspicious/noTemplateCurlyInString: oclif's source text, matched as it is written
const manifestName = "`${dotfile ? '.' : ''}oclif.manifest.json`"
const runManifest = [manifestName, `(this.pjson.oclif.manifestFile ?? ${manifestName})`]
/**
 * oclif sorts the commands by localeCompare, whose first call loads ICU's collation (some 8 ms).
 * With the run manifest nothing is listed, so any fixed order does: code points'.
 */
const runOrder = [
  '.sort((a, b) => a.id.localeCompare(b.id))',
  '.sort(this.pjson.oclif.manifestFile ? (a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) : (a, b) => a.id.localeCompare(b.id))',
]

/**
 * oclif requires some packages at the top of files every command loads, for work few commands do:
 * tinyglobby (finding command files by pattern, which the command table makes needless), ejs (help's
 * and config's templates), cli-spinners (a spinner on a terminal) and wrap-ansi (help and error
 * text), and Node's child_process (a Windows shell's name), readline (a flag read from stdin) and
 * perf_hooks (oclif's own timings, off unless asked). Evaluating them was some 10 ms of each
 * start. Each such require becomes an object that requires the package at its first use:
 * TypeScript's CommonJS reads a package's exports as properties at each use (x_1.glob, x_1.default).
 */
const atFirstUse = (call) => [
  call,
  call.startsWith('__importDefault') ? `{get default() { return ${call}.default }}` : `new Proxy({}, {get: (_, key) => ${call}[key]})`,
]

/**
 * oclif's plugin loader finds the plugins among the dependencies by matching every dependency's
 * name against every plugin pattern with minimatch, which compiles a pattern for each pair: 32
 * here, some 8 ms of each command's start. Its minimatch is a stand-in that answers a pattern
 * without glob characters (a plugin's name, as package.json gives them) by equality, which is what
 * minimatch answers for it, and passes any other to minimatch, loaded then.
 */
const literalPatterns = [
  'const minimatch_1 = require("minimatch");',
  `const minimatch_1 = {minimatch: (name, pattern, options) => (options === undefined && !/[*?[\\]{}()!#\\\\]/.test(pattern) ? name === pattern : require("minimatch").minimatch(name, pattern, options))};`,
]

/** The edits made to @oclif/core's files (under lib/) as they are bundled: [text, replacement]. */
const OCLIF_EDITS = {
  'config/plugin.js': [runManifest, runOrder, atFirstUse('require("tinyglobby")')],
  'config/plugin-loader.js': [literalPatterns],
  'config/config.js': [atFirstUse('__importDefault(require("ejs"))')],
  'help/util.js': [atFirstUse('__importDefault(require("ejs"))')],
  'ux/action/spinner.js': [atFirstUse('__importDefault(require("cli-spinners"))')],
  'errors/errors/cli.js': [atFirstUse('__importDefault(require("wrap-ansi"))')],
  'errors/errors/pretty-print.js': [atFirstUse('__importDefault(require("wrap-ansi"))')],
  'help/formatter.js': [atFirstUse('__importDefault(require("wrap-ansi"))')],
  'util/os.js': [
    atFirstUse('require("node:child_process")'),
    // Whether this is WSL, at every start: wsl-utils' isWsl is is-wsl's answer, without the rest of
    // wsl-utils (which loads child_process and PowerShell's helpers).
    ["(await import('wsl-utils')).isWsl", "(await import('is-wsl')).default"],
  ],
  'parser/parse.js': [atFirstUse('require("node:readline")')],
  'performance.js': [atFirstUse('require("node:perf_hooks")')],
}

/** Makes OCLIF_EDITS; the build stops if a text it names is no longer in oclif's file. */
const oclifEdits = {
  name: 'placemat-oclif-edits',
  setup(build) {
    const lib = path.join('@oclif', 'core', 'lib') + path.sep
    build.onLoad({filter: /\.js$/}, async (args) => {
      const at = args.path.lastIndexOf(lib)
      if (at < 0) return undefined
      const file = args.path.slice(at + lib.length).replaceAll(path.sep, '/')
      if (!Object.hasOwn(OCLIF_EDITS, file)) return undefined
      let source = await fs.promises.readFile(args.path, 'utf8')
      for (const [text, replacement] of OCLIF_EDITS[file]) {
        if (!source.includes(text)) throw new Error(`${args.path}: no ${text} to edit`)
        source = source.replace(text, replacement)
      }
      return {contents: source, loader: 'js'}
    })
  },
}

/** The entry module above, as a virtual file (this plugin resolves it before `externals` can). */
const entry = {
  name: 'placemat-entry',
  setup(build) {
    build.onResolve({filter: /^placemat-cli$/}, () => ({path: 'placemat-cli', namespace: 'placemat-entry'}))
    build.onLoad({filter: /.*/, namespace: 'placemat-entry'}, () => ({contents: entrySource, resolveDir: root, loader: 'js'}))
  },
}

/**
 * Project modules that find files relative to themselves (import.meta.url) keep the URL they have
 * when compiled by tsc (dist/<same path>.js), so those relative paths (e.g. ../../../bin/run.js)
 * still resolve from whichever file of dist/cli the module lands in.
 */
const metaUrl = {
  name: 'placemat-import-meta-url',
  setup(build) {
    build.onLoad({filter: /\.tsx?$/}, async (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined
      const source = await fs.promises.readFile(args.path, 'utf8')
      const loader = args.path.endsWith('x') ? 'tsx' : 'ts'
      if (!source.includes('import.meta.url')) return {contents: source, loader}
      const compiled = path.join(root, 'dist', path.relative(root, args.path)).replace(/\.tsx?$/, '.js')
      const rel = path.relative(outdir, compiled).split(path.sep).join('/')
      return {contents: source.replaceAll('import.meta.url', `new URL(${JSON.stringify(rel)}, import.meta.url).href`), loader}
    })
  },
}

try {
  const {metafile} = await esbuild.build({
    entryPoints: [{in: 'placemat-cli', out: 'index'}],
    absWorkingDir: root,
    outdir: tmpdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // All output in one directory: the import.meta.url rewrite below counts on it.
    chunkNames: '[name]-[hash]',
    sourcemap: true,
    // Less to parse on every start; identifiers keep their names (stack traces, oclif's class names).
    minifyWhitespace: true,
    minifySyntax: true,
    // oclif checks that Node satisfies the engines field of its own package.json, which it finds next
    // to its files: there is none next to the bundle, so the check could only fail quietly after
    // loading semver. Its documented switch turns it off.
    define: {'process.env.OCLIF_DISABLE_ENGINE_WARNING': '"1"'},
    // CommonJS code in the bundle (oclif and its dependencies) requires Node built-ins.
    banner: {js: ESM_BANNER},
    metafile: true,
    tsconfig: path.join(root, 'tsconfig.json'),
    plugins: [entry, oclifEdits, externals, metaUrl],
    logLevel: 'warning',
  })
  await toCommonJS(tmpdir, metafile, root)
  fs.rmSync(outdir, {recursive: true, force: true})
  fs.renameSync(tmpdir, outdir)
} finally {
  fs.rmSync(tmpdir, {recursive: true, force: true})
}

// The manifest: what help, the command list and topic listings are printed from without loading
// any command. Made from the compiled command classes, as `oclif manifest` did with pattern discovery.
const {Plugin} = await import('@oclif/core')
const globPatterns = commands.map((c) =>
  path
    .relative(commandsDir, c.file)
    .split(path.sep)
    .join('/')
    .replace(/\.tsx?$/, '.js'),
)
const pjson = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))
const plugin = new Plugin({
  root,
  isRoot: true,
  type: 'core',
  // Only the compiled files of commands that have a source: dist/ may keep files of removed ones.
  pjson: {...pjson, oclif: {...pjson.oclif, commands: {strategy: 'pattern', target: './dist/commands', globPatterns}}},
  ignoreManifest: true,
  errorOnManifestCreate: true,
  respectNoCacheDefault: true,
})
await plugin.load()
const missing = commands.filter((c) => !plugin.manifest.commands[c.id]).map((c) => c.id)
if (missing.length > 0) throw new Error(`no compiled command in dist/commands for: ${missing.join(', ')} (run tsc first)`)
const manifestFile = path.join(root, 'oclif.manifest.json')
// Without indentation: every command reads and parses it at start (some 470 KB instead of 680 KB).
fs.writeFileSync(`${manifestFile}.${process.pid}`, JSON.stringify(plugin.manifest))
fs.renameSync(`${manifestFile}.${process.pid}`, manifestFile)

// The run manifest (see runManifest above): each command without what only help prints. Its args
// stay: oclif reads them to tell where a command's words end and its arguments begin.
const helpOnly = new Set(['flags', 'description', 'summary', 'examples', 'usage'])
const runCommands = Object.fromEntries(
  Object.entries(plugin.manifest.commands).map(([id, c]) => [id, Object.fromEntries(Object.entries(c).filter(([k]) => !helpOnly.has(k)))]),
)
fs.writeFileSync(path.join(outdir, 'run.manifest.json'), JSON.stringify({...plugin.manifest, commands: runCommands}))

makeCodeCache(root, outdir)
