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
    expect(
      some.stdout
        .trim()
        .split('\n')
        .map((l) => l.split(/\s+/)[0]),
    ).toEqual(['name', 'generation'])
    const bogus = await placemat(['provider', 'show', 'cn1', '-c', 'bogus', ...t])
    expect(bogus.code).toBe(2)
    expect(bogus.stderr).toMatch(/unknown column\(s\): bogus; choose from uuid, name/)
  })

  it('-c takes a column as its header spells it, in any case', async () => {
    const list = await placemat(['provider', 'list', '-c', 'NAME,Generation', ...t])
    expect(list.code, list.stderr).toBe(0)
    expect(list.stdout.split('\n')[0].split(/\s+/)).toEqual(['NAME', 'GENERATION'])
  })

  it('a mistyped command with arguments, an unknown flag and a missing argument: one line each, with the closest, exit 2', async () => {
    const typo = await placemat(['provider', 'shwo', 'cn1', ...t])
    expect(typo.code).toBe(2)
    // The command is named without the arguments and flags typed after it.
    expect(typo.stderr).toBe('placemat: command provider shwo not found; did you mean `placemat provider show`?\n')
    const flag = await placemat(['candidates', '--requried', 'HW_CPU_X86_AVX2', '--resources', 'VCPU:1', ...t])
    expect(flag.code).toBe(2)
    expect(flag.stderr).toBe('placemat: unknown flag --requried; did you mean --required? (see `placemat candidates --help`)\n')
    const dependent = await placemat(['audit', '--delete', ...t])
    expect(dependent.code).toBe(2)
    expect(dependent.stderr).toBe(
      'placemat: All of the following must be provided when using --delete: --known-consumers; see `placemat audit --help`\n',
    )
    const missing = await placemat(['provider', 'show', ...t])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toBe('placemat: missing argument PROVIDER (provider uuid or name); see `placemat provider show --help`\n')
  })

  it('a write command refuses output flags that do not fit what it prints before it writes (exit 2, nothing written)', async () => {
    expect((await placemat(['provider', 'create', 'w1', ...t])).code).toBe(0)
    expect((await placemat(['inventory', 'set', 'w1', 'VCPU=8', ...t])).code).toBe(0)
    const C = (i: number) => `f3000000-0000-4000-8000-00000000000${i}`
    const owner = ['--project', 'p1', '--user', 'u1']
    const claim = (i: number, ...more: string[]) =>
      placemat(['claim', C(i), '--resources', 'VCPU:1', '--in-tree', 'w1', ...owner, ...more, ...t])
    const set = (...more: string[]) => placemat(['allocation', 'set', C(2), '--allocation', 'rp=w1,VCPU=1', ...owner, ...more, ...t])
    const refused: Array<[Promise<{code: number; stderr: string}>, RegExp]> = [
      [
        claim(1, '-c', 'bogus'),
        /^placemat: unknown column\(s\): bogus; choose from consumer, candidate, .*, consumer_uuid, refreshes, consumer_generation\n$/,
      ],
      [claim(1, '--sort-column', 'via'), /^placemat: --sort-column: placemat claim prints no table\n$/],
      [claim(1, '--ids'), /^placemat: --ids: placemat claim prints no list\n$/],
      [
        claim(1, '--count', '2', '--spread', 'rack', '-c', 'bogus'),
        /^placemat: unknown column\(s\): bogus; choose from label, consumer_uuid, node/,
      ],
      [set('-c', 'bogus'), /^placemat: unknown column\(s\): bogus; choose from resource_provider, /],
      [set('--ids'), /^placemat: --ids: this list has no uuid column\n$/],
      [placemat(['host', 'disable', 'w1', '-c', 'status', ...t]), /^placemat: -c: placemat host disable prints no columns or keys/],
      [
        placemat(['group', 'create', 'g3', '--policy', 'affinity', '--level', 'rack', '-c', 'name', ...t]),
        /^placemat: -c: placemat group create prints/,
      ],
    ]
    for (const [run, message] of refused) {
      const r = await run
      expect(r.code, r.stderr).toBe(2)
      expect(r.stderr).toMatch(message)
    }
    // Nothing was written: no claim, no allocation, the host in service, no group.
    expect(JSON.parse((await placemat(['host', 'show', 'w1', '--json', ...t])).stdout)).toMatchObject({disabled: false, consumers: []})
    expect(JSON.parse((await placemat(['group', 'list', '--json', ...t])).stdout).groups).toEqual([])
    // claim's -c takes the keys of its JSON document too.
    const claimed = await claim(1, '-f', 'value', '-c', 'consumer_uuid,candidate')
    expect(claimed.code, claimed.stderr).toBe(0)
    expect(claimed.stdout).toBe(`${C(1)}\n1 of 1\n`)
  })

  it('a consumer of no type: TYPE empty in the allocation tables, consumer_type null in their JSON', async () => {
    const C = 'f5000000-0000-4000-8000-000000000001'
    const set = await placemat([
      'allocation',
      'set',
      C,
      '--allocation',
      'rp=w1,VCPU=1',
      '--project',
      'p1',
      '--user',
      'u1',
      '-c',
      'user_id,consumer_type',
      ...t,
    ])
    expect(set.code, set.stderr).toBe(0)
    expect(set.stdout.split('\n')[1]).toBe('u1')
    const shown = await placemat(['allocation', 'show', C, '-f', 'value', '-c', 'project_id,consumer_type', ...t])
    expect(shown.stdout).toBe('p1 None\n')
    const amended = await placemat(['allocation', 'set', C, '--amend', '--allocation', 'rp=w1,VCPU=2', '--json', ...t])
    expect(JSON.parse(amended.stdout)).toMatchObject({consumer_type: null})
    expect(JSON.parse((await placemat(['allocation', 'show', C, '--json', ...t])).stdout)).toMatchObject({consumer_type: null})
  })

  it('host show: the same lines for every host, and -c takes the keys of its JSON', async () => {
    const keys = (out: string) =>
      out
        .trim()
        .split('\n')
        .map((l) => l.split(/\s+/)[0])
    const enabled = await placemat(['host', 'show', 'w1', ...t])
    expect(keys(enabled.stdout)).toEqual(['name', 'uuid', 'status', 'reason', 'rack', 'row', 'room', 'consumers', 'VCPU', 'generation'])
    const value = (...c: string[]) => placemat(['host', 'show', 'w1', '-f', 'value', '-c', c.join(','), ...t])
    expect((await value('status', 'reason', 'disabled', 'disabled_reason')).stdout).toBe('enabled\n\nfalse\nNone\n')
    expect((await placemat(['host', 'disable', 'w1', '--reason', 'PSU', ...t])).code).toBe(0)
    expect(keys((await placemat(['host', 'show', 'w1', ...t])).stdout)).toEqual(keys(enabled.stdout))
    expect((await value('status', 'reason', 'disabled', 'disabled_reason')).stdout).toBe('disabled\nPSU\ntrue\nPSU\n')
    expect((await placemat(['host', 'enable', 'w1', ...t])).code).toBe(0)
    // used: every class of capacity, 0 when none of it is used (an empty host too).
    expect((await placemat(['provider', 'create', 'w2', ...t])).code).toBe(0)
    expect((await placemat(['inventory', 'set', 'w2', 'VCPU=4', 'MEMORY_MB=1024', ...t])).code).toBe(0)
    expect(JSON.parse((await placemat(['host', 'show', 'w2', '--json', ...t])).stdout)).toMatchObject({
      capacity: {VCPU: 4, MEMORY_MB: 1024},
      used: {VCPU: 0, MEMORY_MB: 0},
    })
    expect((await value('used')).stdout).toMatch(/^\{"VCPU":\d+\}\n$/)
  })

  it('consumer ids are checked before anything is asked (exit 2)', async () => {
    for (const args of [
      ['allocation', 'show', 'not-a-uuid'],
      ['allocation', 'unset', 'not-a-uuid', '--provider', 'cn1'],
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

describe('offline work on a new file', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-init-'))
  afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

  it('a missing --db file is said before any input is read; db init creates one; a second init changes nothing (exit 4)', async () => {
    const db = path.join(dir, 'new.db')
    const big = path.join(dir, 'big.yaml')
    fs.writeFileSync(big, 'providers: [this is not even read')
    const missing = await placemat(['apply', big, '--db', db])
    expect(missing.code).toBe(3)
    expect(missing.stderr).toBe(`placemat: no database file at ${db} (create one with: placemat db init --db ${db})\n`)
    const init = await placemat(['db', 'init', '--db', db])
    expect(init.code, init.stderr).toBe(0)
    expect((await placemat(['db', 'init', '--db', db])).code).toBe(4)
    fs.writeFileSync(big, 'providers:\n  - name: cn1\n    inventories: {VCPU: 8}\n')
    expect((await placemat(['apply', big, '--db', db])).code).toBe(0)
    expect((await placemat(['db', 'status', '--db', db])).code).toBe(0)
  })

  it('inventory set warns when capacity would drop below usage, and a dry run says it is one', async () => {
    const db = path.join(dir, 'inv.db')
    expect((await placemat(['db', 'init', '--db', db])).code).toBe(0)
    expect((await placemat(['provider', 'create', 'cn1', '--db', db])).code).toBe(0)
    expect((await placemat(['inventory', 'set', 'cn1', 'VCPU=8', '--db', db])).code).toBe(0)
    const consumer = '00000000-0000-0000-0000-0000000000c1'
    const claimed = await placemat([
      'allocation',
      'set',
      consumer,
      '--allocation',
      'rp=cn1,VCPU=6',
      '--project',
      'p',
      '--user',
      'u',
      '--db',
      db,
    ])
    expect(claimed.code, claimed.stderr).toBe(0)
    const dry = await placemat(['inventory', 'set', 'cn1', 'VCPU=4', '--dry-run', '--db', db])
    expect(dry.code).toBe(0)
    expect(dry.stderr).toBe('placemat: warning: VCPU on cn1: capacity 4 would be below what is in use (6)\n')
    expect(dry.stdout.trim().split('\n').at(-1)).toBe('Dry run: nothing was changed.')
    const real = await placemat(['inventory', 'set', 'cn1', 'VCPU=4', '--db', db])
    expect(real.code).toBe(0)
    expect(real.stderr).toContain('capacity 4 would be below what is in use (6)')
    expect(real.stdout).not.toContain('Dry run')
  })

  it('help for a command or topic nobody has says so as placemat does (exit 2)', async () => {
    const none = await placemat(['help', 'zzzzzzzzzz'])
    expect([none.code, none.stdout, none.stderr]).toEqual([2, '', 'placemat: no command or topic zzzzzzzzzz; `placemat help` lists them\n'])
    const near = await placemat(['help', 'provdier'])
    expect([near.code, near.stderr]).toEqual([2, expect.stringContaining('did you mean `placemat help provider')])
    expect((await placemat(['help', 'provider', 'list'])).code).toBe(0)
    const typo = await placemat(['help', 'provider', 'shwo'])
    expect([typo.code, typo.stderr]).toEqual([2, expect.stringContaining('did you mean `placemat help provider show`')])
    // A command's own arguments and flags after its name are no topic.
    for (const args of [
      ['provider', 'show', 'cn1', '--help'],
      ['provider', 'show', '--help', '--db', '/nowhere.db'],
    ])
      expect((await placemat(args)).stdout, args.join(' ')).toContain('Show a resource provider.')
  })

  it('inventory set makes the custom class it names, its dry run says so, and both refuse a class that is neither', async () => {
    const db = path.join(dir, 'custom.db')
    expect((await placemat(['db', 'init', '--db', db])).code).toBe(0)
    expect((await placemat(['provider', 'create', 'r1', '--db', db])).code).toBe(0)
    const dry = await placemat(['inventory', 'set', 'r1', 'CUSTOM_FPGA=4', '--dry-run', '--db', db])
    expect(dry.code, dry.stderr).toBe(0)
    expect(dry.stdout).toContain('resource class CUSTOM_FPGA would be created')
    expect((await placemat(['class', 'show', 'CUSTOM_FPGA', '--db', db])).code).toBe(3)
    const real = await placemat(['inventory', 'set', 'r1', 'CUSTOM_FPGA=4', '--db', db])
    expect(real.code, real.stderr).toBe(0)
    expect((await placemat(['class', 'show', 'CUSTOM_FPGA', '--db', db])).code).toBe(0)
    for (const extra of [['--dry-run'], []]) {
      const bad = await placemat(['inventory', 'set', 'r1', 'VCPUS=4', ...extra, '--db', db])
      expect([bad.code, bad.stderr], extra.join(' ')).toEqual([6, expect.stringContaining('no resource class VCPUS')])
    }
  })
})

describe('the quick start on a fresh database', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-quick-'))
  afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

  it('provider trait add creates the custom traits it names', async () => {
    const db = path.join(dir, 'q.db')
    expect((await placemat(['db', 'init', '--db', db])).code).toBe(0)
    expect((await placemat(['provider', 'create', 'cn-0001', '--db', db])).code).toBe(0)
    const added = await placemat(['provider', 'trait', 'add', 'cn-0001', 'HW_CPU_X86_AVX2', 'CUSTOM_GOLD', '--json', '--db', db])
    expect(added.code, added.stderr).toBe(0)
    expect(JSON.parse(added.stdout).traits.sort()).toEqual(['CUSTOM_GOLD', 'HW_CPU_X86_AVX2'])
    const bad = await placemat(['provider', 'trait', 'add', 'cn-0001', 'NOT_A_TRAIT', '--db', db])
    expect(bad.code).toBe(6)
  })
})

describe('file errors', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-yaml-'))
  afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

  it('a YAML error shows the line it points at', async () => {
    const db = path.join(dir, 'y.db')
    expect((await placemat(['db', 'init', '--db', db])).code).toBe(0)
    const file = path.join(dir, 'bad.yaml')
    fs.writeFileSync(file, 'providers:\n  - name: a\n   inventories: {VCPU: 4}\n')
    const r = await placemat(['apply', file, '--db', db])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('at line 3, column 1:\n')
    expect(r.stderr).toContain('   inventories: {VCPU: 4}')
  })
})

describe('a mistyped command', () => {
  it('gets a suggestion and exit 2', async () => {
    const r = await placemat(['provder', 'list'])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe('placemat: command provder list not found; did you mean `placemat provider list`?\n')
  })
})

describe('output for scripts', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-value-'))
  afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

  it('-f value, --no-headers and --sort-column on lists and records', async () => {
    const db = path.join(dir, 'v.db')
    expect((await placemat(['db', 'init', '--db', db])).code).toBe(0)
    for (const n of ['cn2', 'cn10', 'cn1']) expect((await placemat(['provider', 'create', n, '--db', db])).code).toBe(0)
    const names = await placemat(['provider', 'list', '-f', 'value', '-c', 'name', '--sort-column', 'name', '--db', db])
    expect(names.stdout).toBe('cn1\ncn2\ncn10\n')
    const bare = await placemat(['provider', 'list', '--no-headers', '-c', 'name', '--sort-column', 'name', '--db', db])
    expect(bare.stdout).toBe('cn1\ncn2\ncn10\n')
    const show = await placemat(['provider', 'show', 'cn1', '-f', 'value', '-c', 'name,generation', '--db', db])
    expect(show.stdout).toBe('cn1\n0\n')
  })
})

describe('auth failures have exit codes of their own', () => {
  it('401 is 10, 403 is 11', async () => {
    const {startServer} = await import('../../src/daemon/server.js')
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-auth-'))
    const server = await startServer({db: path.join(dir, 'a.db'), host: '127.0.0.1', port: 0, auth: 'noauth2'})
    try {
      const none = await placemat(['provider', 'list', '--url', server.url])
      expect(none.code, none.stderr).toBe(10)
      const user = await placemat(['provider', 'list', '--url', server.url, '--token', 'someone'])
      expect(user.code, user.stderr).toBe(11)
      expect((await placemat(['provider', 'list', '--url', server.url, '--token', 'admin'])).code).toBe(0)
    } finally {
      await server.close()
      fs.rmSync(dir, {recursive: true, force: true})
    }
  })
})

describe('help', () => {
  it('a topic lists its commands with their examples; a command help never breaks a line in the middle', async () => {
    const topic = await placemat(['help', 'rack'])
    expect(topic.stdout).toContain('EXAMPLES\n  $ placemat rack add rack-1a-01 cn-0009 cn-0010\n')
    const claim = await placemat(['claim', '--help'])
    // What the command does comes before its flags (the shared ones run to some 35 lines).
    expect(claim.stdout.indexOf('DESCRIPTION')).toBeLessThan(claim.stdout.indexOf('FLAGS'))
    const from = claim.stdout.indexOf('DESCRIPTION')
    const next = claim.stdout.slice(from + 1).search(/\n[A-Z][A-Z ]+\n/)
    const description = claim.stdout.slice(from, next < 0 ? undefined : from + 1 + next)
    // A hand-wrapped line the help wrapped again leaves a word or two alone on a line.
    const stranded = description.split('\n').filter((l, i, all) => /^ {2}[a-z]\S*( \S+)?$/.test(l) && /^ {2}[a-z]/.test(all[i + 1] ?? ''))
    expect(stranded).toEqual([])
  })
})

describe('-f value on commands that print a record', () => {
  it('prints what a person reads, one value a line, not a JSON object', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-claimvalue-'))
    const db = path.join(dir, 'c.db')
    try {
      expect((await placemat(['db', 'init', '--db', db])).code).toBe(0)
      expect((await placemat(['provider', 'create', 'cn1', '--db', db])).code).toBe(0)
      expect((await placemat(['inventory', 'set', 'cn1', 'VCPU=8', '--db', db])).code).toBe(0)
      const r = await placemat([
        'claim',
        '00000000-0000-0000-0000-0000000000c1',
        '--resources',
        'VCPU:2',
        '--project',
        'p',
        '--user',
        'u',
        '-f',
        'value',
        '-c',
        'allocations',
        '--db',
        db,
      ])
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toBe('cn1: VCPU=2\n')
    } finally {
      fs.rmSync(dir, {recursive: true, force: true})
    }
  })
})

describe('--ids on lists', () => {
  it('prints the uuids alone, one a line', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-ids-'))
    const db = path.join(dir, 'i.db')
    try {
      expect((await placemat(['db', 'init', '--db', db])).code).toBe(0)
      const uuids: string[] = []
      for (const n of ['cn1', 'cn2']) uuids.push(JSON.parse((await placemat(['provider', 'create', n, '--json', '--db', db])).stdout).uuid)
      const ids = await placemat(['provider', 'list', '--ids', '--sort-column', 'name', '--db', db])
      expect(ids.stdout).toBe(uuids.join('\n') + '\n')
      expect((await placemat(['class', 'list', '--ids', '--db', db])).code).toBe(2)
    } finally {
      fs.rmSync(dir, {recursive: true, force: true})
    }
  })
})
