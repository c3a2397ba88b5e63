/** Database files in temporary folders, removed when the test file ends. */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll} from 'vitest'

/** A function that gives a new `name` file in a fresh temporary folder on each call. */
export function tempFiles(prefix: string, name = 'p.db'): () => string {
  const dirs: string[] = []
  afterAll(() => {
    for (const d of dirs) fs.rmSync(d, {recursive: true, force: true})
  })
  return () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
    dirs.push(dir)
    return path.join(dir, name)
  }
}
