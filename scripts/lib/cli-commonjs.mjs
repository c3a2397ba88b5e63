// The first build's ES module chunks made CommonJS: scripts/build-cli.mjs's second pass.
import fs from 'node:fs'
import {createRequire} from 'node:module'
import path from 'node:path'
import * as esbuild from 'esbuild'

/** An ES module banner every chunk of the first build starts with (CommonJS code in it requires). */
export const ESM_BANNER =
  "import {createRequire as __placematCreateRequire} from 'node:module';\nconst require = __placematCreateRequire(import.meta.url);"

/**
 * Whether a package the bundle leaves external is an ES module (ink): CommonJS may only import() it.
 * `resolve` is require.resolve from the project's root.
 */
function isEsModule(specifier, resolve) {
  if (specifier.startsWith('node:')) return false
  let file
  try {
    file = resolve(specifier)
  } catch {
    // Only an `import` condition (no `require`): an ES module.
    return true
  }
  if (file.endsWith('.mjs')) return true
  if (file.endsWith('.cjs')) return false
  for (let dir = path.dirname(file); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const pj = path.join(dir, 'package.json')
    if (fs.existsSync(pj)) return JSON.parse(fs.readFileSync(pj, 'utf8')).type === 'module'
  }
  return false
}

/**
 * The first build's ES module chunks made CommonJS (X.js -> X.cjs), but for those that import an
 * ES module package (ink) or such a chunk, which stay ES modules. Why: Node starts its ES module
 * loader only for an import(); a command that loads only CommonJS never pays for it (some 7 ms)
 * nor, for each of its twenty-odd chunks, the loader's resolving, reading and linking: provider
 * list and --version some 0.9x, paired. esbuild splits only ES modules, hence two passes.
 *
 * Before the second pass each chunk's text is edited without changing its length, so the first
 * pass's source maps (which the second chains) still hold: import("./X.js") of another CommonJS
 * chunk becomes $chunk("./X.js") (a require of X.cjs, in a promise as import() gave),
 * import("node:x") becomes $built("node:x"), a require seen as import() shows it (its exports and
 * a default), and any other import( becomes $esmod( (below); the ES module banner lines are dropped.
 */
export async function toCommonJS(dir, metafile, root) {
  const {resolve} = createRequire(path.join(root, 'package.json'))
  const chunks = new Map()
  for (const [file, out] of Object.entries(metafile.outputs)) {
    if (!file.endsWith('.js')) continue
    chunks.set(path.basename(file), out.imports)
  }
  const staticChunks = (name) =>
    chunks
      .get(name)
      .filter((i) => !i.external && i.kind === 'import-statement')
      .map((i) => path.basename(i.path))
  const esm = new Set(
    [...chunks.keys()].filter((name) =>
      chunks.get(name).some((i) => i.external && i.kind === 'import-statement' && isEsModule(i.path, resolve)),
    ),
  )
  for (let grew = true; grew; ) {
    grew = false
    for (const name of chunks.keys()) {
      if (esm.has(name) || !staticChunks(name).some((d) => esm.has(d))) continue
      esm.add(name)
      grew = true
    }
  }
  if (esm.has('index.js')) throw new Error(`the command table imports an ES module package: ${[...esm].join(', ')}`)
  const cjsName = (name) => `${name.slice(0, -3)}.cjs`
  for (const name of chunks.keys()) {
    const file = path.join(dir, name)
    let text = fs.readFileSync(file, 'utf8')
    const chunkImports = chunks.get(name).filter((i) => !i.external)
    if (esm.has(name)) {
      for (const i of chunkImports) {
        const dep = path.basename(i.path)
        if (!esm.has(dep)) text = text.replaceAll(`"./${dep}"`, `"./${cjsName(dep)}"`)
      }
      fs.writeFileSync(file, text)
      continue
    }
    if (!text.startsWith(ESM_BANNER)) throw new Error(`${name}: no banner`)
    text = text.replace(ESM_BANNER, '\n')
    for (const dep of new Set(chunkImports.filter((i) => i.kind === 'dynamic-import').map((i) => path.basename(i.path)))) {
      if (esm.has(dep)) continue
      const call = `import("./${dep}")`
      if (!text.includes(call)) throw new Error(`${name}: no ${call}`)
      text = text.replaceAll(call, `$chunk("./${dep}")`)
    }
    text = text.replace(/\bimport\("(node:[\w/]+)"\)/g, '$$built("$1")')
    // Any other import() (a package such as yaml or mysql2, a chunk left an ES module, a file oclif
    // loads): through bin/run.js's, since a chunk compiled from the code cache (bin/code-cache.js)
    // has no import() of its own (a chunk required some other way uses its own). Not `import()` in
    // a string, nor a property named import.
    text = text.replace(/(?<![\w$.'"`])import\((?!\))/g, '$$esmod(')
    fs.writeFileSync(file, text)
  }
  const cjs = [...chunks.keys()].filter((name) => !esm.has(name))
  await esbuild.build({
    entryPoints: cjs.map((name) => path.join(dir, name)),
    absWorkingDir: root,
    outdir: dir,
    outExtension: {'.js': '.cjs'},
    allowOverwrite: true,
    // Each chunk on its own: other chunks and packages stay where they are.
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    minifyWhitespace: true,
    minifySyntax: true,
    define: {'import.meta.url': '__placematUrl'},
    // ES modules are strict: so stays the code.
    banner: {
      js: `"use strict";const __placematUrl=require("node:url").pathToFileURL(__filename).href;const $chunk=(c)=>Promise.resolve().then(()=>require(c.slice(0,-3)+".cjs"));const $built=(m)=>Promise.resolve().then(()=>{const x=require(m);return{...x,default:x}});const $esmod=(s)=>(globalThis[Symbol.for("placemat.import")]??((u)=>import(u)))(s.startsWith("./")?require("node:url").pathToFileURL(require("node:path").join(__dirname,s)).href:s);`,
    },
    plugins: [
      {
        name: 'placemat-chunks',
        setup(build) {
          build.onResolve({filter: /.*/}, (args) => {
            if (args.kind === 'entry-point') return undefined
            const chunk = args.path.startsWith('./') ? args.path.slice(2) : null
            if (chunk !== null && !chunks.has(chunk)) throw new Error(`${args.importer}: ${args.path} is not a chunk`)
            return {path: chunk !== null && !esm.has(chunk) ? `./${cjsName(chunk)}` : args.path, external: true}
          })
        },
      },
    ],
    logLevel: 'warning',
  })
  for (const name of cjs) {
    fs.rmSync(path.join(dir, name))
    fs.rmSync(path.join(dir, `${name}.map`), {force: true})
  }
}
