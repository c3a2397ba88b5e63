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

  it('one datacenter file: apply makes its providers and then its layout (a dry run shows both); topology apply takes its layout', async () => {
    const file = write('dc.yaml', DATACENTER)
    for (const {what, args} of targets()) {
      const dry = await ok(['apply', file, '--dry-run', ...args])
      expect(dry.stdout, what).toMatch(/^Plan: providers 2 to create, 0 to update, 0 to delete; 1 resource class to create\.\n/)
      expect(dry.stdout, what).toContain(
        [
          'Plan: racks/rows/rooms 4 to create, 0 to update, 0 to delete; hosts 2 to add, 0 to move, 0 to remove.',
          '+ room room-1',
          '+ row row-1a (in room room-1)',
          '+ rack rack-1a-01 (in row row-1a)',
          '+ rack rack-spare',
          '+ host dc-01 -> rack rack-1a-01',
          '+ host dc-02 -> rack rack-1a-01',
          'Dry run: nothing was changed.',
          '',
        ].join('\n'),
      )
      expect((await ok(['provider', 'list', '--ids', ...args])).stdout, what).toBe('')

      const applied = await ok(['apply', file, ...args])
      // The providers and the layout in one transaction.
      expect(applied.stdout, what).toMatch(
        /\+ host dc-02 -> rack rack-1a-01\nApplying \d+ operations and the layout in one transaction\.\.\.\nApplied: 2 created, 0 updated, 0 deleted; 4 racks\/rows\/rooms and 2 hosts changed \(one transaction, [\d.]+ s\)\.\n$/,
      )
      const layout = await ok(['topology', 'layout', ...args])
      expect(layout.stdout, what).toContain('          - name: rack-1a-01\n            hosts: [dc-01, dc-02]\n')

      // Again: nothing to do, for either part; and topology apply reads the same file's layout.
      expect((await ok(['apply', file, ...args])).stdout, what).toBe(
        'No changes: everything in the file is up to date.\nNo changes: the topology already matches the layout.\n',
      )
      expect((await ok(['topology', 'apply', file, ...args])).stdout, what).toBe('No changes: the topology already matches the layout.\n')
    }
  })

  it('a datacenter file whose layout a placement group refuses writes none of its providers either (one transaction)', async () => {
    const first = write(
      'gx-1.yaml',
      'providers:\n  - {name: gx-01, inventories: {VCPU: 8}}\n  - {name: gx-02, inventories: {VCPU: 8}}\nracks:\n  - {name: k-a, hosts: [gx-01]}\n  - {name: k-b, hosts: [gx-02]}\n',
    )
    const second = write(
      'gx-2.yaml',
      'providers:\n  - {name: gx-01, inventories: {VCPU: 8}}\n  - {name: gx-02, inventories: {VCPU: 8}}\n  - {name: gx-03, inventories: {VCPU: 8}}\nracks:\n  - {name: k-a, hosts: [gx-01, gx-02]}\n',
    )
    for (const {what, args} of targets()) {
      await ok(['apply', first, ...args])
      await ok(['group', 'create', 'gx', '--policy', 'anti-affinity', '--level', 'rack', ...args])
      for (const i of [1, 2]) {
        await ok([
          'claim',
          `0000000${i}-0000-4000-8000-00000000aaaa`,
          '--group',
          'gx',
          '--resources',
          'VCPU:6',
          '--in-tree',
          `gx-0${i}`,
          '--project',
          'p',
          '--user',
          'u',
          ...args,
        ])
      }
      const r = await run(['apply', second, ...args])
      expect(r.code, `${what}\n${r.stdout}\n${r.stderr}`).toBe(4)
      expect(r.stderr, what).toMatch(/nothing was changed/)
      expect(r.stderr, what).toMatch(/group gx \(anti-affinity by rack\)/)
      expect((await ok(['provider', 'list', '-f', 'value', '-c', 'name', ...args])).stdout, what).not.toMatch(/gx-03/)
      expect((await ok(['rack', 'show', 'k-b', '-f', 'value', '-c', 'hosts', ...args])).stdout, what).toMatch(/gx-02/)
    }
  })

  it('a datacenter file whose layout names an unknown host is refused before anything is written; unknown keys are refused by both commands', async () => {
    const bad = write('dc-bad.yaml', DATACENTER.replace('hosts: [dc-01, dc-02]', 'hosts: [dc-01, dc-99]').replace(/dc-0([12])/g, 'new-0$1'))
    for (const {what, args} of targets()) {
      const r = await run(['apply', bad, ...args])
      expect([r.code, r.stdout, r.stderr], what).toEqual([
        6,
        '',
        'placemat: the file cannot be applied (nothing was changed): Invalid layout: unknown host(s): dc-99\n',
      ])
      expect((await ok(['provider', 'list', '-f', 'value', '-c', 'name', ...args])).stdout, what).not.toMatch(/new-0/)
    }
    const unknown = write('dc-unknown.yaml', `${DATACENTER}colour: blue\n`)
    const applied = await run(['apply', unknown, '--db', fileDb])
    expect([applied.code, applied.stderr]).toEqual([
      2,
      `placemat: ${unknown}: 1 problem(s):\n  colour: unknown key; expected one of providers, resource_classes, traits, aggregates, rooms, rows, racks\n`,
    ])
    const topology = await run(['topology', 'apply', unknown, '--db', fileDb])
    expect([topology.code, topology.stderr]).toEqual([
      2,
      `placemat: ${unknown}: colour: unknown key; expected rooms, rows, racks (and generation), or providers, resource_classes, traits, aggregates\n`,
    ])
  })

  it('topology apply --help: its example, pasted as shown, applies (to a database with those hosts)', async () => {
    const help = (await ok(['topology', 'apply', '--help'])).stdout
    expect(help).not.toMatch(/exactly a layout file/)
    // The example: from its "rooms:" line to the blank line after it, as the help indents it.
    const lines = help.split('\n')
    const from = lines.findIndex((l) => l.trim() === 'rooms:')
    const to = lines.findIndex((l, i) => i > from && l.trim() === '')
    const shown = lines.slice(from, to)
    const margin = Math.min(...shown.map((l) => /^ */.exec(l)![0].length))
    const example = shown.map((l) => l.slice(margin)).join('\n') + '\n'
    expect(example).toBe(
      'rooms:\n  - name: room-1\n    rows:\n      - name: row-1a\n        racks:\n          - name: rack-1a-01\n            hosts: [cn-0001, cn-0002]\n',
    )
    const db = path.join(e.dir, 'help.db')
    await newDb(db)
    await ok([
      'apply',
      write(
        'help-hosts.yaml',
        'providers:\n  - name: cn-0001\n    inventories: {VCPU: 8}\n  - name: cn-0002\n    inventories: {VCPU: 8}\n',
      ),
      '--db',
      db,
    ])
    const applied = await ok(['topology', 'apply', write('help-example.yaml', example), '--db', db])
    expect(applied.stdout).toContain('+ host cn-0001 -> rack rack-1a-01\n+ host cn-0002 -> rack rack-1a-01\n')
    expect((await ok(['rack', 'show', 'rack-1a-01', '--db', db])).stdout).toMatch(/cn-0001/)
  })

  it("daemon start, daemon stop, db status: --db's default is the environment's database (PLACEMAT_HOME)", async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-home-'))
    try {
      for (const command of [
        ['daemon', 'start'],
        ['daemon', 'stop'],
        ['daemon', 'status'],
        ['db', 'status'],
        ['db', 'check'],
      ]) {
        const help = (await ok([...command, '--help'], {PLACEMAT_HOME: home})).stdout.replace(/\s+/g, ' ')
        expect(help, command.join(' ')).toContain(`--db=<value> [default: ${path.join(home, 'placemat.db')}]`)
        expect(help, command.join(' ')).not.toContain('.local/share')
      }
    } finally {
      fs.rmSync(home, {recursive: true, force: true})
    }
  })
})
