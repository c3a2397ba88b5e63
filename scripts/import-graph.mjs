#!/usr/bin/env node
// The import graph of src/ and commands/, read from the sources with TypeScript's parser:
// the run-time import circles (type-only imports and lazy import() left out: neither runs at
// load), the imports that run up the layers and up the command line's floors, and the files over
// the size limit, which holds for the scripts too (scripts/**/*.mjs: sized, not placed in the
// layers).
//
//   node scripts/import-graph.mjs          a report
//   node scripts/import-graph.mjs --json   the same as JSON
//   node scripts/import-graph.mjs --root DIR   of another checkout
//
// The layers, from the ground up: core, store, client, http, daemon, cli, commands. A file may
// import its own layer and those below it, never one above (lazy import() included). The command
// line has floors of its own within (CLI_FLOORS), held the same way. The map page's scripts
// (src/ui) stand apart: a browser loads them, so at run time they import only each other (and no
// package).
import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import ts from 'typescript'

export const LAYERS = ['src/core', 'src/store', 'src/client', 'src/http', 'src/daemon', 'src/cli', 'commands']

/**
 * The command line's own floors, from the top: the commands, with the command classes at
 * src/cli's root they extend; the services the commands call (services/db among them); the rooms
 * the services use (backend, candidates, topology, apply, groups, capacity, formats, render,
 * components, hooks, and src/cli's own files: output, failure, flags, help). A file stands on
 * the floor of the longest path here that holds it, and may import its own floor and those
 * below, never one above; what lies below src/cli is the layers' to order.
 */
export const CLI_FLOORS = [
  ['commands', 'src/cli/base-command.ts', 'src/cli/placemat-command.ts', 'src/cli/plan-command.ts', 'src/cli/topology-commands.ts'],
  ['src/cli/services'],
  ['src/cli'],
]

/** The map page's scripts: compiled to dist/src/ui and run in a browser, in no layer; they import only each other at run time (types of the core's answers aside). */
export const BROWSER = 'src/ui'

/** The line count above which a source file is too big (generated tables aside). */
export const MAX_LINES = 500
const GENERATED = new Set(['src/core/standard.ts'])

function sourceFiles(root, dir) {
  const out = []
  const walk = (d) => {
    for (const e of fs.readdirSync(path.join(root, d), {withFileTypes: true})) {
      const rel = path.posix.join(d, e.name)
      if (e.isDirectory()) walk(rel)
      else if (/\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(rel)
    }
  }
  if (fs.existsSync(path.join(root, dir))) walk(dir)
  return out
}

/** The scripts, each held to the size limit. */
function scriptFiles(root) {
  const out = []
  const walk = (d) => {
    for (const e of fs.readdirSync(path.join(root, d), {withFileTypes: true})) {
      const rel = path.posix.join(d, e.name)
      if (e.isDirectory()) walk(rel)
      else if (e.name.endsWith('.mjs')) out.push(rel)
    }
  }
  if (fs.existsSync(path.join(root, 'scripts'))) walk('scripts')
  return out
}

const lineCount = (text) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0)

/** A relative specifier ('../core/state.js') as the repository path of its source file. */
function resolve(root, from, spec) {
  if (!spec.startsWith('.')) return null
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec))
  for (const candidate of [base.replace(/\.js$/, '.ts'), base.replace(/\.js$/, '.tsx'), `${base}.ts`, `${base}/index.ts`]) {
    if (fs.existsSync(path.join(root, candidate))) return candidate
  }
  return null
}

/** Every import of one file: target, whether it runs at load (not type-only, not lazy), whether lazy. */
function importsOf(root, file) {
  const text = fs.readFileSync(path.join(root, file), 'utf8')
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS)
  const out = []
  const add = (spec, runtime, lazy) => {
    const target = resolve(root, file, spec)
    if (target) out.push({target, runtime, lazy})
    else if (!spec.startsWith('.')) out.push({target: null, spec, runtime, lazy})
  }
  const visit = (node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const c = node.importClause
      let typeOnly = Boolean(c?.isTypeOnly)
      if (c && !typeOnly && !c.name && c.namedBindings && ts.isNamedImports(c.namedBindings)) {
        typeOnly = c.namedBindings.elements.length > 0 && c.namedBindings.elements.every((e) => e.isTypeOnly)
      }
      add(node.moduleSpecifier.text, !typeOnly, false)
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      let typeOnly = node.isTypeOnly
      if (!typeOnly && node.exportClause && ts.isNamedExports(node.exportClause)) {
        typeOnly = node.exportClause.elements.length > 0 && node.exportClause.elements.every((e) => e.isTypeOnly)
      }
      add(node.moduleSpecifier.text, !typeOnly, false)
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments.length === 1 &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      add(node.arguments[0].text, false, true)
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node.argument.literal.text, false, false)
    }
    ts.forEachChild(node, visit)
  }
  visit(sf)
  return {imports: out, lines: lineCount(text)}
}

export const layerOf = (file) => LAYERS.findIndex((l) => file === l || file.startsWith(`${l}/`))

/** The command line's floor of a file, 0 the top (-1: not the command line's). */
export function cliFloorOf(file) {
  let floor = -1
  let longest = -1
  CLI_FLOORS.forEach((paths, i) => {
    for (const p of paths) {
      if ((file === p || file.startsWith(`${p}/`)) && p.length > longest) {
        floor = i
        longest = p.length
      }
    }
  })
  return floor
}

/** Strongly connected components of more than one file (Tarjan), each sorted, largest first. */
function circles(nodes, edges) {
  let index = 0
  const idx = new Map()
  const low = new Map()
  const stack = []
  const on = new Set()
  const out = []
  const strong = (v) => {
    idx.set(v, index)
    low.set(v, index++)
    stack.push(v)
    on.add(v)
    for (const w of edges.get(v) ?? []) {
      if (!idx.has(w)) {
        strong(w)
        low.set(v, Math.min(low.get(v), low.get(w)))
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)))
    }
    if (low.get(v) === idx.get(v)) {
      const comp = []
      let w
      do {
        w = stack.pop()
        on.delete(w)
        comp.push(w)
      } while (w !== v)
      if (comp.length > 1) out.push(comp.sort())
    }
  }
  for (const v of nodes) if (!idx.has(v)) strong(v)
  return out.sort((a, b) => b.length - a.length || a[0].localeCompare(b[0]))
}

const byImport = (a, b) => a.from.localeCompare(b.from) || a.to.localeCompare(b.to)

/** The graph's findings for the checkout at `root`. */
export function importGraph(root) {
  const files = [...sourceFiles(root, 'src'), ...sourceFiles(root, 'commands')]
  const runtime = new Map()
  const upward = []
  const cliUpward = []
  const large = []
  const browser = []
  let edges = 0
  for (const f of files) {
    const {imports: all, lines} = importsOf(root, f)
    if (lines > MAX_LINES && !GENERATED.has(f)) large.push({file: f, lines})
    // The page's scripts are served to a browser as they are compiled: at run time they reach only each other.
    if (f.startsWith(`${BROWSER}/`))
      for (const i of all) if (i.runtime && !i.target?.startsWith(`${BROWSER}/`)) browser.push({from: f, to: i.target ?? i.spec})
    const imports = all.filter((i) => i.target)
    runtime.set(
      f,
      imports.filter((i) => i.runtime).map((i) => i.target),
    )
    edges += imports.length
    const mine = layerOf(f)
    for (const i of imports) {
      const theirs = layerOf(i.target)
      // Type-only imports carry no code, but they still say who knows whom: counted too.
      if (mine >= 0 && theirs > mine) upward.push({from: f, to: i.target, typeOnly: !i.runtime && !i.lazy, lazy: i.lazy})
      const floor = cliFloorOf(f)
      const theirFloor = cliFloorOf(i.target)
      if (floor >= 0 && theirFloor >= 0 && theirFloor < floor)
        cliUpward.push({from: f, to: i.target, typeOnly: !i.runtime && !i.lazy, lazy: i.lazy})
    }
  }
  const scripts = scriptFiles(root)
  for (const f of scripts) {
    const lines = lineCount(fs.readFileSync(path.join(root, f), 'utf8'))
    if (lines > MAX_LINES) large.push({file: f, lines})
  }
  return {
    files: files.length,
    imports: edges,
    scripts: scripts.length,
    circles: circles(files, runtime),
    upward: upward.sort(byImport),
    cliUpward: cliUpward.sort(byImport),
    large: large.sort((a, b) => b.lines - a.lines),
    browser,
  }
}

function report(g) {
  const lines = [`${g.files} files, ${g.imports} imports; ${g.scripts} scripts sized`]
  lines.push(`run-time import circles: ${g.circles.length}`)
  for (const c of g.circles) lines.push(`  ${c.length} files: ${c.join(' ')}`)
  lines.push(`imports up the layers (${LAYERS.join(' < ')}): ${g.upward.length}`)
  for (const u of g.upward) lines.push(`  ${u.from} -> ${u.to}${u.typeOnly ? ' (type only)' : u.lazy ? ' (lazy)' : ''}`)
  const floors = CLI_FLOORS.map((paths) => paths[0].replace(/^src\/cli\/?/, '') || 'rooms').reverse()
  lines.push(`imports up the command line's floors (${floors.join(' < ')}): ${g.cliUpward.length}`)
  for (const u of g.cliUpward) lines.push(`  ${u.from} -> ${u.to}${u.typeOnly ? ' (type only)' : u.lazy ? ' (lazy)' : ''}`)
  lines.push(`files over ${MAX_LINES} lines (scripts included): ${g.large.length}`)
  for (const l of g.large) lines.push(`  ${l.lines} ${l.file}`)
  lines.push(`run-time imports of the page's scripts (${BROWSER}) outside them: ${g.browser.length}`)
  for (const b of g.browser) lines.push(`  ${b.from} -> ${b.to}`)
  return lines.join('\n')
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const at = process.argv.indexOf('--root')
  const root = at > 0 ? path.resolve(process.argv[at + 1]) : fileURLToPath(new URL('..', import.meta.url))
  const g = importGraph(root)
  console.log(process.argv.includes('--json') ? JSON.stringify(g, null, 2) : report(g))
}
