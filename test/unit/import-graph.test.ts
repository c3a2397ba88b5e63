/**
 * The house's shape, read from the imports (scripts/import-graph.mjs): no run-time import
 * circle, no import up the layers (core, store, client, http, daemon, cli, commands), none up the
 * command line's floors (commands, services, the rooms services use), no file over 500 lines
 * (generated tables aside), every .mjs under scripts/ included; the map page's scripts (src/ui)
 * import only each other at run time. The lists below name what may stand as an exception; they
 * are empty.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, describe, expect, it} from 'vitest'
// @ts-expect-error: a script of the repository, without types
import {cliFloorOf, importGraph} from '../../scripts/import-graph.mjs'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

interface Graph {
  files: number
  circles: string[][]
  upward: Array<{from: string; to: string}>
  cliUpward: Array<{from: string; to: string}>
  large: Array<{file: string; lines: number}>
  scripts: number
}

/** None left. */
const KNOWN_CIRCLES: string[] = []

/** None left. */
const KNOWN_UPWARD: string[] = []

/** None left. */
const KNOWN_CLI_UPWARD: string[] = []

/** None left. */
const KNOWN_LARGE: string[] = []

describe('the import graph', () => {
  const g = importGraph(ROOT) as Graph

  it('has no run-time import circle but those still to mend', () => {
    const found = g.circles.map((c) => c.join(' '))
    expect(found.filter((c) => !KNOWN_CIRCLES.includes(c))).toEqual([])
  })

  it('has no import up the layers but those still to mend', () => {
    const found = g.upward.map((u) => `${u.from} -> ${u.to}`)
    expect(found.filter((u) => !KNOWN_UPWARD.includes(u))).toEqual([])
  })

  it("has no import up the command line's floors (commands > services > the rooms they use)", () => {
    const found = g.cliUpward.map((u) => `${u.from} -> ${u.to}`)
    expect(found.filter((u) => !KNOWN_CLI_UPWARD.includes(u))).toEqual([])
  })

  it('has no source file over 500 lines but those still to split', () => {
    expect(g.large.map((l) => l.file).filter((f) => !KNOWN_LARGE.includes(f))).toEqual([])
  })

  it("has the page's scripts import only each other at run time (a browser loads them as they are compiled)", () => {
    expect((g as unknown as {browser: Array<{from: string; to: string}>}).browser).toEqual([])
  })

  it('sees every source file and its imports', () => {
    expect(g.files).toBeGreaterThan(250)
    // The scripts are held to the size limit too: fault-run and bench-scaleout in pieces, scripts/lib.
    expect(g.scripts).toBeGreaterThan(50)
    // The core's entity depends on nothing built on it: State's file imports no feature at run time.
    expect(g.circles.flat()).not.toContain('src/core/state/state.ts')
  })
})

describe("the command line's floors", () => {
  it('puts commands and their command classes on top, services below them, every other room of src/cli below those', () => {
    const floors = [
      'commands/apply.ts',
      'src/cli/placemat-command.ts',
      'src/cli/services/claim.ts',
      'src/cli/services/db/status.ts',
      'src/cli/backend/retry.ts',
      'src/cli/formats/document.ts',
      'src/cli/output.ts',
      'src/core/state.ts',
    ].map((f) => cliFloorOf(f))
    expect(floors).toEqual([0, 0, 1, 1, 2, 2, 2, -1])
  })

  // A checkout of three files where a room reaches up into a service (as backend/ once did for
  // retry.ts), type only: the graph names that import, and only that one.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-floors-'))
  afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(dir, file)), {recursive: true})
    fs.writeFileSync(path.join(dir, file), text)
  }

  it('names an import from a room up into the services', () => {
    write('commands/drain.ts', "import {drain} from '../src/cli/services/drain.js'\nexport const run = drain\n")
    write('src/cli/services/drain.ts', "import {retry} from '../backend/retry.js'\nexport const drain = retry\n")
    write('src/cli/backend/retry.ts', "import type {Report} from '../services/drain.js'\nexport const retry = (r?: Report) => r\n")
    const g = importGraph(dir) as Graph
    expect(g.cliUpward).toEqual([{from: 'src/cli/backend/retry.ts', to: 'src/cli/services/drain.ts', typeOnly: true, lazy: false}])
    expect(g.upward).toEqual([])
  })
})
