/**
 * Details an operator meets on the command line: a group name checked before anything is asked
 * (exit 2, naming the characters allowed, the same as the help says), `usage show` of a host
 * whose inventory is on its children, `host list` leaving blank the classes a host does not
 * have, and `inventory set --dry-run` saying which classes it drops and which fields it resets.
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

let dir: string
let db: string[]
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-details-'))
  db = ['--db', path.join(dir, 'cloud.db')]
  fs.writeFileSync(
    path.join(dir, 'cloud.yaml'),
    `providers:
  - {name: gpu-1, inventories: {VCPU: 8, VGPU: 4}}
  - name: cn-1
    children: [{name: cn-1_numa0, inventories: {VCPU: 8, MEMORY_MB: 4096}}]
`,
  )
  ok(await placemat(['db', 'init', ...db]))
  ok(await placemat(['apply', path.join(dir, 'cloud.yaml'), ...db]))
}, 60_000)
afterAll(() => {
  if (dir) fs.rmSync(dir, {recursive: true, force: true})
})

describe('group names', () => {
  it('a name the rule refuses: exit 2 before the endpoint is asked, naming the characters allowed; help says the same rule', async () => {
    const rule = '1-200 letters, digits and . _ : -, starting with a letter or digit'
    for (const name of ['web tier', '.web', 'web/1']) {
      const r = await placemat(['group', 'create', name, '--policy', 'anti-affinity', '--level', 'host', ...db])
      expect(r.code, r.stderr).toBe(2)
      expect(r.stderr).toBe(`placemat: invalid group name '${name}': ${rule}\n`)
    }
    ok(await placemat(['group', 'create', 'tier:web.1_a-b', '--policy', 'anti-affinity', '--level', 'host', ...db]))
    const help = ok(await placemat(['group', 'create', '--help']))
    expect(help.replace(/\s+/g, ' ')).toContain(`group name (${rule})`)
  })
})

describe('usage show', () => {
  it('a root without inventory of its own says so instead of an empty table; JSON stays the body', async () => {
    const r = await placemat(['usage', 'show', 'cn-1', ...db])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^cn-1 has no inventory, so nothing is used on it/)
    expect(r.stdout).toContain('placemat provider tree cn-1')
    expect(JSON.parse(ok(await placemat(['usage', 'show', 'cn-1', '--json', ...db])))).toMatchObject({usages: {}})
    expect(ok(await placemat(['usage', 'show', 'cn-1', '-f', 'value', ...db]))).toBe('')
    expect(ok(await placemat(['usage', 'show', 'gpu-1', ...db]))).toMatch(/^VGPU\s+0\s+4\s+4$/m)
  })
})

describe('host list', () => {
  it('a class a host does not have is blank, as in topology show; one it has is USED/CAPACITY', async () => {
    const lines = ok(await placemat(['host', 'list', '-c', 'name,VCPU,MEMORY_MB,VGPU', ...db]))
      .trimEnd()
      .split('\n')
    expect(lines[0].trim().split(/\s+/)).toEqual(['NAME', 'VCPU', 'MEMORY_MB', 'VGPU'])
    expect(lines.slice(1).map((l) => l.trim().split(/\s+/))).toEqual([
      ['cn-1', '0/8', '0/4096'],
      ['gpu-1', '0/8', '0/4'],
    ])
    expect(ok(await placemat(['host', 'list', '-f', 'value', '-c', 'name,MEMORY_MB,VGPU', ...db]))).toBe(
      'cn-1 0/4096 None\ngpu-1 None 0/4\n',
    )
  })
})

describe('inventory set --dry-run', () => {
  it('shows each class it would drop and each field it would reset to its default, and changes nothing', async () => {
    ok(await placemat(['inventory', 'set', 'gpu-1', 'VCPU=8', 'VGPU=4', '--allocation-ratio', 'VCPU=4', '--reserved', 'VCPU=1', ...db]))
    const r = await placemat(['inventory', 'set', 'gpu-1', 'VCPU=48', '--dry-run', ...db])
    expect(r.code, r.stderr).toBe(0)
    const said = r.stdout.split('\n').filter((l) => l.startsWith('gpu-1: '))
    expect(said).toEqual([
      'gpu-1: VGPU would be dropped (total 4): not named, and inventory set replaces all classes (--amend keeps it)',
      'gpu-1: VCPU reserved would be reset from 1 to its default 0 (--amend keeps it)',
      'gpu-1: VCPU allocation_ratio would be reset from 4 to its default 1 (--amend keeps it)',
    ])
    expect(r.stdout).toMatch(/Dry run: nothing was changed\.\n$/)
    // JSON: the body that would be sent, and the same on stderr.
    const j = await placemat(['inventory', 'set', 'gpu-1', 'VCPU=48', '--dry-run', '--json', ...db])
    expect(Object.keys(JSON.parse(j.stdout).inventories)).toEqual(['VCPU'])
    expect(j.stderr).toContain('placemat: dry run: gpu-1: VGPU would be dropped (total 4)')
    // Nothing was written; with --amend nothing would be lost.
    expect(JSON.parse(ok(await placemat(['inventory', 'list', 'gpu-1', '--json', ...db])))).toMatchObject({
      inventories: {VGPU: {total: 4}, VCPU: {allocation_ratio: 4}},
    })
    const amend = await placemat(['inventory', 'set', 'gpu-1', 'VCPU=48', '--amend', '--dry-run', ...db])
    expect(amend.stdout).not.toMatch(/would be/)
  })
})
