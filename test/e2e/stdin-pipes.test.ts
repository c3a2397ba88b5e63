/**
 * `apply -` and `import -` read standard input whole, also from a pipe whose writer is slow
 * (a non-blocking read would fail with EAGAIN before the first byte comes).
 */
import {execFile} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {BIN, ROOT, childEnv, placemat, type Result} from '../helpers/cli.js'

/** `(sleep 0.5; cat FILE) | placemat ARGS`: the data comes after the command has started reading. */
function slowPipe(file: string, args: string[]): Promise<Result> {
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ')
  return new Promise((resolve) => {
    execFile('bash', ['-c', `(sleep 0.5; cat '${file}') | ${quoted}`], {cwd: ROOT, env: childEnv()}, (err, stdout, stderr) => {
      resolve({code: err ? Number((err as {code?: number}).code ?? 1) : 0, stdout, stderr})
    })
  })
}

describe('standard input from a slow pipe', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-stdin-'))
  afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

  it('apply - and import - read all of it', async () => {
    const cloud = path.join(dir, 'cloud.yaml')
    fs.writeFileSync(cloud, 'providers:\n  - name: piped\n    inventories: {VCPU: 4}\n')
    const db = path.join(dir, 'a.db')
    const empty = path.join(dir, 'empty.yaml')
    fs.writeFileSync(empty, 'placemat_snapshot: 1\nresource_classes: []\ntraits: []\nproviders: []\nconsumers: []\n')
    const created = await placemat(['import', empty, '--db', db])
    expect(created.code, created.stderr).toBe(0)
    const dry = await slowPipe(cloud, ['apply', '-', '--dry-run', '--db', db])
    expect(dry.stderr).toBe('')
    expect(dry.code).toBe(0)
    expect(dry.stdout).toContain('+ provider piped')
    expect((await slowPipe(cloud, ['apply', '-', '--db', db])).code).toBe(0)

    const snap = path.join(dir, 'snap.yaml')
    const exported = await placemat(['export', '--db', db])
    fs.writeFileSync(snap, exported.stdout)
    const imported = await slowPipe(snap, ['import', '-', '--db', path.join(dir, 'b.db')])
    expect(imported.stderr).toBe('')
    expect(imported.code).toBe(0)
    expect((await placemat(['export', '--db', path.join(dir, 'b.db')])).stdout).toBe(exported.stdout)
  })
})
