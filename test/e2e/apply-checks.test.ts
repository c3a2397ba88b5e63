/**
 * `apply --dry-run` refuses what the write refuses, with the same words, and never a schema
 * dump: on a file (a rehearsal on the store's own State), on a daemon (one batch) and on plain
 * Placement (checked before the first call). Inventories the write would refuse are the
 * file's problems, found when it is planned (exit 2, each named by provider and class).
 */
import fs from 'node:fs'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {placemat} from '../helpers/cli.js'
import {startEndpoints, stopEndpoints, type Endpoints} from '../helpers/endpoints.js'

describe('apply checks', () => {
  let e: Endpoints
  let db: string
  beforeAll(async () => {
    e = await startEndpoints('placemat-apply-checks-')
    db = path.join(e.dir, 'a.db')
    fs.writeFileSync(
      path.join(e.dir, 'empty.yaml'),
      'placemat_snapshot: 1\nresource_classes: []\ntraits: []\nproviders: []\nconsumers: []\n',
    )
    expect((await placemat(['import', path.join(e.dir, 'empty.yaml'), '--db', db])).code).toBe(0)
  })
  afterAll(() => stopEndpoints(e))

  for (const [what, inventories, message] of [
    ['a negative total', '{MEMORY_MB: -1}', /^ {2}provider bad: inventory MEMORY_MB: total -1 is below 1$/m],
    ['reserved above total', '{VCPU: {total: 4, reserved: 8}}', /^ {2}provider bad: inventory VCPU: reserved 8 is above total 4$/m],
  ] as const) {
    it(`${what}: the dry run and the write both exit 2, say why, and change nothing`, async () => {
      const file = path.join(e.dir, 'bad.yaml')
      fs.writeFileSync(file, `providers:\n  - name: bad\n    inventories: ${inventories}\n`)
      for (const target of [['--db', db], e.daemon, e.plain]) {
        for (const extra of [['--dry-run'], []]) {
          const r = await placemat(['apply', file, ...target, ...extra])
          expect(r.code, r.stderr).toBe(2)
          expect(r.stderr).toContain('the file cannot be applied (nothing was changed)')
          expect(r.stderr).toMatch(message)
          expect(r.stderr).not.toContain('Failed validating')
        }
        expect(JSON.parse((await placemat(['provider', 'list', ...target, '--json'])).stdout).resource_providers).toEqual([])
      }
    })
  }
})
