/**
 * An operator's walk through apply files, layouts and help screens, on the real binary: an apply
 * file's inventories checked before anything is written, a datacenter's one file (providers and
 * the layout) taken by `apply` and by `topology apply`, `topology apply --help`'s example pasted
 * as it is shown, and the database file the daemon and db commands default to shown as the
 * environment makes it.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {placemat as run, type Result} from '../helpers/db-tools.js'
import {newDb, startEndpoints, stopEndpoints, type Endpoints} from '../helpers/endpoints.js'

async function ok(args: string[], env?: Record<string, string>): Promise<Result> {
  const r = await run(args, {env})
  expect(r.code, `placemat ${args.join(' ')}\n${r.stderr}\n${r.stdout.slice(0, 2000)}`).toBe(0)
  return r
}

const NEGATIVE = `providers:
  - name: cn-01
    inventories: {VCPU: -1, MEMORY_MB: {total: 1024, reserved: 2048}}
  - name: cn-02
    inventories: {DISK_GB: {total: 100, step_size: 0}}
`

const DATACENTER = `resource_classes: [CUSTOM_FPGA]
providers:
  - name: dc-01
    inventories: {VCPU: 8, CUSTOM_FPGA: 1}
  - name: dc-02
    inventories: {VCPU: 8}
rooms:
  - name: room-1
    rows:
      - name: row-1a
        racks:
          - name: rack-1a-01
            hosts: [dc-01, dc-02]
racks:
  - name: rack-spare
    hosts: []
`

describe('apply files, layouts and help screens as an operator meets them', () => {
  let e: Endpoints
  let fileDb: string
  const write = (name: string, text: string) => {
    const f = path.join(e.dir, name)
    fs.writeFileSync(f, text)
    return f
  }
  const targets = () => [
    {what: 'a daemon', args: e.daemon},
    {what: 'a file', args: ['--db', fileDb]},
  ]

  beforeAll(async () => {
    e = await startEndpoints('placemat-walkthrough-a-')
    fileDb = path.join(e.dir, 'f.db')
    await newDb(fileDb)
  })
  afterAll(() => stopEndpoints(e))

  it('apply checks inventories before writing: exit 2, every problem named by provider and class, nothing written', async () => {
    const file = write('negative.yaml', NEGATIVE)
    for (const {what, args} of [...targets(), {what: 'plain Placement', args: e.plain}]) {
      for (const dry of [[], ['--dry-run']]) {
        const r = await run(['apply', file, ...dry, ...args])
        expect([r.code, r.stdout, r.stderr], what).toEqual([
          2,
          '',
          [
            'placemat: the file cannot be applied (nothing was changed):',
            '  provider cn-01: inventory VCPU: total -1 is below 1',
            '  provider cn-01: inventory MEMORY_MB: reserved 2048 is above total 1024',
            '  provider cn-02: inventory DISK_GB: step_size 0 is below 1',
            '',
          ].join('\n'),
        ])
      }
      expect((await ok(['provider', 'list', '--ids', ...args])).stdout, what).toBe('')
    }
  })
})
