/**
 * The house's shape, read from the imports (scripts/import-graph.mjs): no run-time import
 * circle, no import up the layers (core, store, client, http, daemon, cli, commands), no file over
 * 500 lines (generated tables aside), every .mjs under scripts/ included; the map page's scripts
 * (src/ui) import only each other at run time. The lists below name
 * what may stand as an exception; they are empty.
 */
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
// @ts-expect-error: a script of the repository, without types
import {importGraph} from '../../scripts/import-graph.mjs'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** None left. */
const KNOWN_CIRCLES: string[] = []

/** None left. */
const KNOWN_UPWARD: string[] = []

/** None left. */
const KNOWN_LARGE: string[] = []

describe('the import graph', () => {
  const g = importGraph(ROOT) as {
    circles: string[][]
    upward: Array<{from: string; to: string}>
    large: Array<{file: string; lines: number}>
    scripts: number
  }

  it('has no run-time import circle but those still to mend', () => {
    const found = g.circles.map((c) => c.join(' '))
    expect(found.filter((c) => !KNOWN_CIRCLES.includes(c))).toEqual([])
  })

  it('has no import up the layers but those still to mend', () => {
    const found = g.upward.map((u) => `${u.from} -> ${u.to}`)
    expect(found.filter((u) => !KNOWN_UPWARD.includes(u))).toEqual([])
  })

  it('has no source file over 500 lines but those still to split', () => {
    expect(g.large.map((l) => l.file).filter((f) => !KNOWN_LARGE.includes(f))).toEqual([])
  })

  it("has the page's scripts import only each other at run time (a browser loads them as they are compiled)", () => {
    expect((g as unknown as {browser: Array<{from: string; to: string}>}).browser).toEqual([])
  })

  it('sees every source file and its imports', () => {
    expect((g as unknown as {files: number}).files).toBeGreaterThan(250)
    // The scripts are held to the size limit too: fault-run and bench-scaleout in pieces, scripts/lib.
    expect(g.scripts).toBeGreaterThan(50)
    // The core's entity depends on nothing built on it: State's file imports no feature at run time.
    expect(g.circles.flat()).not.toContain('src/core/state/state.ts')
  })
})
