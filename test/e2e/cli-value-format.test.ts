/**
 * `-f value` for scripts: every line has every column. An empty cell (a root's parent, a
 * consumer's type, a volume's hosts, a consumer in no group) prints None, as osc-placement prints
 * a null value, so a line splits on whitespace into the columns asked for.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {placemat, type Result} from '../helpers/cli.js'

const ok = (r: Result) => {
  expect(r.code, r.stderr).toBe(0)
  return r.stdout
}
const C = (n: number) => `c0000000-0000-4000-8000-${String(n).padStart(12, '0')}`

let dir: string
let db: string[]
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-value-'))
  db = ['--db', path.join(dir, 'cloud.db')]
  fs.writeFileSync(
    path.join(dir, 'cloud.yaml'),
    `providers:
  - {name: ceph, inventories: {DISK_GB: 1000}, traits: [MISC_SHARES_VIA_AGGREGATE], aggregates: [a0000000-0000-4000-8000-000000000001]}
  - name: cn-1
    aggregates: [a0000000-0000-4000-8000-000000000001]
    children: [{name: cn-1_numa0, inventories: {VCPU: 8, MEMORY_MB: 4096}}]
`,
  )
  ok(await placemat(['db', 'init', ...db]))
  ok(await placemat(['apply', path.join(dir, 'cloud.yaml'), ...db]))
  ok(await placemat(['group', 'create', 'web', '--policy', 'anti-affinity', '--level', 'host', ...db]))
  ok(
    await placemat([
      'claim',
      C(1),
      '--group',
      'web',
      '--resources',
      'VCPU:1',
      '--consumer-type',
      'INSTANCE',
      '--project',
      'p',
      '--user',
      'u',
      ...db,
    ]),
  )
  ok(await placemat(['claim', C(2), '--resources', 'VCPU:1,DISK_GB:10', '--project', 'p', '--user', 'u', ...db]))
  ok(await placemat(['claim', C(3), '--resources', 'DISK_GB:10', '--project', 'p', '--user', 'u', ...db]))
}, 60_000)
afterAll(() => {
  if (dir) fs.rmSync(dir, {recursive: true, force: true})
})

/** Each line's fields, split on whitespace as a script does. */
const fields = (out: string) =>
  out
    .trimEnd()
    .split('\n')
    .map((l) => l.split(/\s+/))

describe('-f value', () => {
  it('provider list: roots and children have the same columns, a root without parent says None', async () => {
    const headers = ok(await placemat(['provider', 'list', ...db]))
      .split('\n')[0]
      .trim()
      .split(/\s+/)
    const lines = fields(ok(await placemat(['provider', 'list', '-f', 'value', ...db])))
    expect(lines).toHaveLength(3)
    for (const l of lines) expect(l, l.join(' ')).toHaveLength(headers.length)
    expect(lines.find((l) => l[1] === 'cn-1')![headers.indexOf('PARENT')]).toBe('None')
  })

  it('consumer list: a consumer without type, hosts or groups has every column, each empty one None', async () => {
    const headers = ok(await placemat(['consumer', 'list', ...db]))
      .split('\n')[0]
      .trim()
      .split(/\s+/)
    const lines = fields(ok(await placemat(['consumer', 'list', '-f', 'value', ...db])))
    expect(lines).toHaveLength(3)
    for (const l of lines) expect(l, l.join(' ')).toHaveLength(headers.length)
    expect(ok(await placemat(['consumer', 'list', '-f', 'value', '-c', 'uuid,type,hosts,groups', ...db]))).toBe(
      `${C(1)} INSTANCE cn-1 web\n${C(2)} None cn-1 None\n${C(3)} None None None\n`,
    )
  })

  it("a record's missing value prints None on its line", async () => {
    expect(ok(await placemat(['provider', 'show', 'cn-1', '-f', 'value', '-c', 'name,parent_provider_uuid', ...db]))).toBe('cn-1\nNone\n')
  })
})
