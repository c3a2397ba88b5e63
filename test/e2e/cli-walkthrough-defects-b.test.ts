/**
 * An operator's walk through the command line, on the real binary: an unknown consumer is
 * not found alike for claim show, allocation show and consumer show; usage total counts the
 * consumers holding each class; a copy made by export and import lists as its source does;
 * -f value cells hold no whitespace; bad values and flags that mean nothing are refused
 * before anything else is said; a child provider's host is named; "not found" reads alike.
 */
import fs from 'node:fs'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {placemat as run, type Result} from '../helpers/db-tools.js'
import {newDb, startEndpoints, stopEndpoints, type Endpoints} from '../helpers/endpoints.js'

const C = (i: number) => `77777777-0000-4000-8000-${String(i).padStart(12, '0')}`
const NOBODY = '77777777-0000-4000-8000-999999999999'

const CLOUD = `aggregates:
  ceph-a: 6c3a1a52-4d8e-4b7e-9a51-0f4b8a1c2d01
providers:
  - name: cn-01
    inventories: {VCPU: 16, MEMORY_MB: 32768}
    aggregates: [fast-net, ceph-a]
    children:
      - name: cn-01_numa0
        inventories: {VCPU: 8, MEMORY_MB: 16384, VGPU: 4}
  - name: cn-02
    inventories: {VCPU: 16, MEMORY_MB: 32768}
    aggregates: [ceph-a]
  - name: ceph-1
    inventories: {DISK_GB: 1000}
    traits: [MISC_SHARES_VIA_AGGREGATE]
    aggregates: [ceph-a]
`
const LAYOUT =
  'rooms:\n  - name: m1\n    rows:\n      - name: r1\n        racks:\n          - {name: k2, hosts: [cn-02]}\n          - {name: k1, hosts: [cn-01]}\n'

async function ok(args: string[]): Promise<Result> {
  const r = await run(args)
  expect(r.code, `placemat ${args.join(' ')}\n${r.stderr}\n${r.stdout.slice(0, 2000)}`).toBe(0)
  return r
}

describe('an operator walks the command line', () => {
  let e: Endpoints
  let file: string[]
  let dir: string

  beforeAll(async () => {
    e = await startEndpoints('placemat-walkthrough-b-')
    dir = e.dir
    file = ['--db', path.join(dir, 'f.db')]
    await newDb(path.join(dir, 'f.db'))
    fs.writeFileSync(path.join(dir, 'cloud.yaml'), CLOUD)
    fs.writeFileSync(path.join(dir, 'layout.yaml'), LAYOUT)
    for (const args of [file, e.daemon, e.plain]) await ok(['apply', path.join(dir, 'cloud.yaml'), ...args])
    await ok(['topology', 'apply', path.join(dir, 'layout.yaml'), ...file])
    // Three consumers hold VGPU (on the NUMA node), two do not; one more has no type and asks DISK_GB first.
    for (let i = 1; i <= 5; i++) {
      const vgpu = i <= 3 ? ',VGPU:1' : ''
      await ok([
        'claim',
        C(i),
        '--resources',
        `VCPU:2,MEMORY_MB:1024,DISK_GB:10${vgpu}`,
        '--project',
        'p1',
        '--user',
        'u1',
        '--consumer-type',
        'INSTANCE',
        ...file,
      ])
    }
    await ok(['claim', C(6), '--resources', 'DISK_GB:5,VCPU:1', '--project', 'p1', '--user', 'u2', ...file])
    // Write history a copy cannot repeat: a provider made, then renamed; aggregates added in no order.
    await ok(['provider', 'create', 'zeta', ...file])
    await ok(['provider', 'create', 'alpha', ...file])
    await ok(['provider', 'set', 'zeta', '--name', 'aaa-first', ...file])
    await ok(['aggregate', 'add', 'cn-02', 'ffffffff-0000-4000-8000-000000000001', ...file])
    await ok(['aggregate', 'add', 'cn-02', '00000000-0000-4000-8000-000000000009', ...file])
    await ok(['claim', C(7), '--resources', 'VCPU:1', '--project', 'p1', '--user', 'u1', ...e.daemon])
    await ok(['claim', C(7), '--resources', 'VCPU:1', '--project', 'p1', '--user', 'u1', ...e.plain])
  })
  afterAll(() => stopEndpoints(e))

  it('an unknown consumer: claim show, allocation show and consumer show all exit 3, saying so alike', async () => {
    const said = `placemat: No consumer ${NOBODY} found: it holds no allocations and has no record\n`
    for (const args of [file, e.daemon, e.plain]) {
      for (const cmd of [
        ['claim', 'show'],
        ['allocation', 'show'],
        ['consumer', 'show'],
      ]) {
        for (const format of [[], ['--json']]) {
          const r = await run([...cmd, NOBODY, ...format, ...args])
          expect([r.code, r.stdout, r.stderr], `${cmd.join(' ')} ${format.join(' ')} ${args.join(' ')}`).toEqual([3, '', said])
        }
      }
    }
    // A consumer that holds something is shown by all three.
    for (const cmd of [
      ['claim', 'show'],
      ['allocation', 'show'],
      ['consumer', 'show'],
    ]) {
      for (const args of [e.daemon, e.plain]) expect((await ok([...cmd, C(7), ...args])).stdout).toMatch(/VCPU=1/)
    }
  })

  it('usage total: each line counts the consumers of its type holding its class', async () => {
    const total = await ok(['usage', 'total', '--project', 'p1', '-f', 'value', ...file])
    expect(total.stdout).toBe(
      'INSTANCE VCPU 10 5\nINSTANCE MEMORY_MB 5120 5\nINSTANCE DISK_GB 50 5\nINSTANCE VGPU 3 3\nunknown VCPU 1 1\nunknown DISK_GB 5 1\n',
    )
    const all = await ok(['usage', 'total', '--project', 'p1', '--consumer-type', 'all', '--user', 'u1', '-f', 'value', ...file])
    expect(all.stdout).toBe('all VCPU 10 5\nall MEMORY_MB 5120 5\nall DISK_GB 50 5\nall VGPU 3 3\n')
    // The document stays GET /usages' body: consumer_count is the whole type's.
    const json = JSON.parse((await ok(['usage', 'total', '--project', 'p1', '--json', ...file])).stdout)
    expect(json.usages.INSTANCE).toEqual({VCPU: 10, MEMORY_MB: 5120, DISK_GB: 50, VGPU: 3, consumer_count: 5})
    // Plain Placement: the same counts, from the providers' allocations.
    expect((await ok(['usage', 'total', '--project', 'p1', '-f', 'value', ...e.plain])).stdout).toBe('unknown VCPU 1 1\n')
  })

  it('export, then import into a new database: the copy lists exactly as its source', async () => {
    const snap = path.join(dir, 'snap.yaml')
    await ok(['export', '-o', snap, ...file])
    const copy = ['--db', path.join(dir, 'copy.db')]
    await ok(['import', snap, ...copy])
    const listings = [
      ['provider', 'list'],
      ['aggregate', 'list', 'cn-01'],
      ['aggregate', 'list', 'cn-02'],
      ['provider', 'show', 'cn-02'],
      ['usage', 'total', '--project', 'p1'],
      ['consumer', 'list'],
      ['consumer', 'show', C(1)],
      ['claim', 'show', C(1)],
      ['allocation', 'show', C(1)],
      ['host', 'describe', 'cn-01'],
    ]
    for (const cmd of listings) {
      expect((await ok([...cmd, ...copy])).stdout, cmd.join(' ')).toBe((await ok([...cmd, ...file])).stdout)
    }
    // The order is the listing's own: providers by name, aggregates named first, then racks, rows and rooms, then by uuid.
    expect((await ok(['provider', 'list', '-f', 'value', '-c', 'name', ...copy])).stdout).toBe(
      'aaa-first\nalpha\nceph-1\ncn-01\ncn-01_numa0\ncn-02\n',
    )
    expect((await ok(['aggregate', 'list', 'cn-02', '-f', 'value', '-c', 'name', ...copy])).stdout).toBe(
      'ceph-a\nrack_k2\nrow_r1\nroom_m1\nNone\nNone\n',
    )
    expect((await ok(['consumer', 'list', '-f', 'value', '-c', 'resources', ...copy])).stdout).toBe(
      'VCPU=2,MEMORY_MB=1024,DISK_GB=10,VGPU=1\n'.repeat(3) + 'VCPU=2,MEMORY_MB=1024,DISK_GB=10\n'.repeat(2) + 'VCPU=1,DISK_GB=5\n',
    )
  })

  it('-f value: a line splits on whitespace into the columns asked for', async () => {
    const cols = ['index', 'providers', 'resources', 'free_after', 'rack']
    const r = await ok(['candidates', '--resources', 'VCPU:4,MEMORY_MB:8192,DISK_GB:40', '-f', 'value', '-c', cols.join(','), ...file])
    const lines = r.stdout.trimEnd().split('\n')
    expect(lines.length).toBeGreaterThan(0)
    for (const line of lines) expect(line.split(/\s+/), line).toHaveLength(cols.length)
    expect(r.stdout).toMatch(
      /^\d+ cn-01_numa0,ceph-1 cn-01_numa0:VCPU=4,MEMORY_MB=8192;ceph-1:DISK_GB=40 cn-01_numa0:VCPU=\d+,MEMORY_MB=\d+;ceph-1:DISK_GB=\d+ k1$/m,
    )
    // The table keeps its spaces.
    expect((await ok(['candidates', '--resources', 'VCPU:4,MEMORY_MB:8192,DISK_GB:40', ...file])).stdout).toContain(
      'cn-01_numa0: VCPU=4,MEMORY_MB=8192; ceph-1: DISK_GB=40',
    )
  })

  it('a bad inventory value is refused before anything is said of the provider', async () => {
    const r = await run(['inventory', 'set', 'cn-02', 'VCPU=-16', ...file])
    expect([r.code, r.stderr]).toEqual([2, 'placemat: VCPU=-16: total must be 1 to 2147483647, not -16\n'])
    const reserved = await run(['inventory', 'set', 'cn-02', '--amend', '--reserved', 'VCPU=-1', ...file])
    expect([reserved.code, reserved.stderr]).toEqual([2, 'placemat: --reserved VCPU=-1: reserved must be 0 to 2147483647, not -1\n'])
  })

  it('output flags that mean nothing for a command are refused (exit 2)', async () => {
    for (const [flags, said] of [
      [['-c', 'foo'], '-c: placemat export prints a document, with no columns or keys to pick'],
      [['--ids'], '--ids: placemat export prints no list'],
      [['--sort-column', 'name'], '--sort-column: placemat export prints no table'],
      [['--no-headers'], '--no-headers: placemat export prints no table'],
      [['--format', 'apply', '--ids'], '--ids: placemat export prints no list'],
    ]) {
      const r = await run(['export', ...flags, ...file])
      expect([r.code, r.stdout, r.stderr], flags.join(' ')).toEqual([2, '', `placemat: ${said}\n`])
    }
    const show = await run(['host', 'show', 'cn-01', '--ids', ...file])
    expect([show.code, show.stderr]).toEqual([2, 'placemat: --ids: placemat host show prints no list\n'])
    const group = await run(['top', '--once', '-c', 'x', ...file])
    expect(group.code).toBe(2)
  })

  it('a child provider is not a host: its host is named by name', async () => {
    for (const args of [file, e.plain]) {
      const r = await run(['host', 'describe', 'cn-01_numa0', ...args])
      expect([r.code, r.stderr]).toEqual([
        6,
        'placemat: cn-01_numa0 is not a host: it is a provider in the tree of cn-01 (name the root provider)\n',
      ])
    }
  })

  it('"not found" reads alike, whoever found nothing', async () => {
    const group = await run(['group', 'show', 'nosuch', ...file])
    expect([group.code, group.stderr]).toEqual([3, "placemat: No placement group named 'nosuch'.\n"])
    const provider = await run(['provider', 'show', 'nosuch', ...file])
    expect([provider.code, provider.stderr]).toEqual([3, "placemat: No resource provider with uuid or name 'nosuch' found\n"])
  })
})
