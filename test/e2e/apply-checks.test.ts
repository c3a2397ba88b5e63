/** `apply --dry-run` refuses what the write refuses, with the same words, and never a schema dump. */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {placemat} from '../helpers/cli.js'

describe('apply checks', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-apply-checks-'))
  const db = path.join(dir, 'a.db')
  beforeAll(async () => {
    fs.writeFileSync(path.join(dir, 'empty.yaml'), 'placemat_snapshot: 1\nresource_classes: []\ntraits: []\nproviders: []\nconsumers: []\n')
    expect((await placemat(['import', path.join(dir, 'empty.yaml'), '--db', db])).code).toBe(0)
  })
  afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

  for (const [what, inventories, message] of [
    ['a negative total', '{MEMORY_MB: -1}', /operation 1 \(set_inventories\): JSON does not validate: -1 is less than the minimum of 1$/m],
    ['reserved above total', '{VCPU: {total: 4, reserved: 8}}', /The reserved value is greater than total\.$/m],
  ] as const) {
    it(`${what}: the dry run and the write both exit 6, say why, and change nothing`, async () => {
      const file = path.join(dir, 'bad.yaml')
      fs.writeFileSync(file, `providers:\n  - name: bad\n    inventories: ${inventories}\n`)
      for (const extra of [['--dry-run'], []]) {
        const r = await placemat(['apply', file, '--db', db, ...extra])
        expect(r.code, r.stderr).toBe(6)
        expect(r.stderr).toMatch(message)
        expect(r.stderr).not.toContain('Failed validating')
      }
      expect(JSON.parse((await placemat(['provider', 'list', '--db', db, '--json'])).stdout).resource_providers).toEqual([])
    })
  }
})
