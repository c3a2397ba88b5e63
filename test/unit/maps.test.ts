/**
 * The maps (ARCHITECTURE.md, docs/contributing.md) keep no number a script does not check: the
 * size limit and the count of layers are the import graph's own, and every other figure is a name
 * (a release, a schema, a pull request), not a count or a time that drifts.
 */
import fs from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {LAYERS, MAX_LINES} from '../../scripts/import-graph.mjs'

const ROOT = path.resolve(import.meta.dirname, '../..')
const MAPS = ['ARCHITECTURE.md', 'docs/contributing.md']
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8')

/** Figures that name something (a list's item, an HTTP status, a release, a schema file, an npm version, a pull request), kept as they are. */
const NAMES = [
  /^\d+\. /gm,
  /\b[2-5]0\d\b/g,
  /\b\d+\.\d+(\.\d+)?\b/g,
  /\bschema-\d{4}\b/g,
  /#\d+\b/g,
  /\b\d{4}-[a-z-]+\.ts\b/g,
  /\b0001\b/g,
  /\bbin-links#\d+/g,
]
const WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten']

describe('the maps', () => {
  it('say the size limit and the layers as the import graph has them', () => {
    for (const file of MAPS) {
      for (const m of read(file).matchAll(/over (\d+) lines/g)) expect(Number(m[1]), file).toBe(MAX_LINES)
    }
    const layers = /One package, (\w+) layers/.exec(read('ARCHITECTURE.md'))?.[1]
    expect(WORDS.indexOf(layers ?? ''), 'ARCHITECTURE.md names the layers it counts').toBe(LAYERS.length)
  })

  it('hold no other count or time, which would drift unchecked', () => {
    for (const file of MAPS) {
      let text = read(file).replace(/over \d+ lines/g, '')
      for (const name of NAMES) text = text.replace(name, '')
      // Code and links are names, not figures.
      text = text.replace(/`[^`]*`/g, '').replace(/\]\([^)]*\)/g, ']')
      const figures = [...text.matchAll(/\b\d[\d,.]*\b/g)].map((m) => m[0])
      expect(figures, `${file}: drop these or check them in a test`).toEqual([])
    }
  })
})
