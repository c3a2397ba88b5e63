/** What the command line does with what an operator types: -c on every output, consumer ids. */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {placemat} from '../helpers/cli.js'

const EMPTY = 'placemat_snapshot: 1\nresource_classes: []\ntraits: []\nproviders: []\nconsumers: []\n'

describe('arguments', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-args-'))
  const db = path.join(dir, 'a.db')
  const t = ['--db', db]
  beforeAll(async () => {
    fs.writeFileSync(path.join(dir, 'empty.yaml'), EMPTY)
    expect((await placemat(['import', path.join(dir, 'empty.yaml'), ...t])).code).toBe(0)
    expect((await placemat(['provider', 'create', 'cn1', ...t])).code).toBe(0)
  })
  afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

  it('-c picks and orders the keys of key/value output; an unknown one is a usage error', async () => {
    const some = await placemat(['provider', 'show', 'cn1', '-c', 'name,generation', ...t])
    expect(some.code, some.stderr).toBe(0)
    expect(some.stdout.trim().split('\n').map((l) => l.split(/\s+/)[0])).toEqual(['name', 'generation'])
    const bogus = await placemat(['provider', 'show', 'cn1', '-c', 'bogus', ...t])
    expect(bogus.code).toBe(2)
    expect(bogus.stderr).toMatch(/unknown column\(s\): bogus; choose from uuid, name/)
  })

  it('-c takes a column as its header spells it, in any case', async () => {
    const list = await placemat(['provider', 'list', '-c', 'NAME,Generation', ...t])
    expect(list.code, list.stderr).toBe(0)
    expect(list.stdout.split('\n')[0].split(/\s+/)).toEqual(['NAME', 'GENERATION'])
  })

  it('consumer ids are checked before anything is asked (exit 2)', async () => {
    for (const args of [
      ['allocation', 'show', 'not-a-uuid'],
      ['allocation', 'unset', 'not-a-uuid', '--provider', 'cn1'],
      ['claim', 'show', 'not-a-uuid'],
      ['claim', 'release', 'not-a-uuid'],
      ['claim', 'move', 'not-a-uuid', '--to', '00000000-0000-0000-0000-000000000001'],
      ['claim', 'move', '00000000-0000-0000-0000-000000000001', '--to', 'nope'],
    ]) {
      const r = await placemat([...args, ...t])
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2)
      expect(r.stderr).toMatch(/is not a (migration )?consumer (\(--to\) )?uuid/)
    }
  })
})
