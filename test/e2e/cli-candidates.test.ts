/**
 * `placemat candidates` on the real binary: against a daemon (--url), a file (--db) and a
 * "plain Placement" (the daemon behind a proxy that hides /placemat/..., with --layout),
 * on the same cloud; the outputs must agree, and the flags must mean exactly the
 * Placement query they stand for.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {PlacementClient} from '../../src/client/client.js'
import {HttpTransport} from '../../src/client/transports.js'
import {LocalTransport} from '../../src/cli/backend/local-transport.js'
import {nodeUuid} from '../../src/core/topology.js'
import {startServer, type RunningServer} from '../../src/daemon/server.js'
import {plainProxy, seed, U, type HostSpec} from '../helpers/claim-cloud.js'
import {placemat} from '../helpers/cli.js'
import {newDb} from '../helpers/endpoints.js'
const exec = (args: string[]) => placemat(args)

// room m1: row r1 (rack k11: h1 h2, rack k12: h3), row r2 (rack k21: h4); room m2: row r3 (rack k31: h5 h6)
const HOSTS: HostSpec[] = [1, 2, 3, 4, 5, 6].map((i) => ({
  name: `h${i}`,
  uuid: U(i),
  vcpu: 8,
  nic: {name: `h${i}-nic`, uuid: U(100 + i), vfs: 2, traits: [i % 2 ? 'CUSTOM_PHYSNET0' : 'CUSTOM_PHYSNET1']},
}))
const LAYOUT = {
  rooms: [
    {
      name: 'm1',
      rows: [
        {
          name: 'r1',
          racks: [
            {name: 'k11', hosts: ['h1', 'h2']},
            {name: 'k12', hosts: ['h3']},
          ],
        },
        {name: 'r2', racks: [{name: 'k21', hosts: ['h4']}]},
      ],
    },
    {name: 'm2', rows: [{name: 'r3', racks: [{name: 'k31', hosts: ['h5', 'h6']}]}]},
  ],
}
const A1 = 'a0000000-0000-4000-8000-000000000001' // on h2 (k11, r1, m1)
const A2 = 'a0000000-0000-4000-8000-000000000002' // on h4 (k21, r2, m1)

let dir: string
let server: RunningServer
let proxy: {url: string; close(): Promise<void>}
let daemonArgs: string[]
let fileArgs: string[]
let plainArgs: string[]
let layoutFile: string

async function seedAll(client: PlacementClient) {
  await seed(client, HOSTS, LAYOUT)
  const put = (c: string, host: number) =>
    client.put(`/allocations/${c}`, {
      allocations: {[U(host)]: {resources: {VCPU: 2}}},
      project_id: 'p',
      user_id: 'u',
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    })
  await put(A1, 2)
  await put(A2, 4)
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-cli-cand-'))
  server = await startServer({db: path.join(dir, 'daemon.db'), host: '127.0.0.1', port: 0, auth: 'noauth2'})
  await seedAll(new PlacementClient(new HttpTransport(server.url, 'admin')))
  const file = path.join(dir, 'file.db')
  await newDb(file)
  const local = new PlacementClient(await LocalTransport.open(file))
  await seedAll(local)
  await local.close()
  proxy = await plainProxy(server.url)
  layoutFile = path.join(dir, 'layout.yaml')
  fs.writeFileSync(layoutFile, JSON.stringify(LAYOUT))
  daemonArgs = ['--url', server.url, '--token', 'admin']
  fileArgs = ['--db', file]
  plainArgs = ['--url', proxy.url, '--token', 'admin', '--layout', layoutFile]
})

afterAll(async () => {
  await proxy?.close()
  await server?.close()
  fs.rmSync(dir, {recursive: true, force: true})
})

/** Runs on the daemon and on the file (and, when asked, plain Placement with --layout); all must agree. */
async function all(args: string[], opts: {expectCode?: number; plain?: boolean} = {}) {
  const expectCode = opts.expectCode ?? 0
  const runs = [exec([...args, ...daemonArgs]), exec([...args, ...fileArgs])]
  if (opts.plain) runs.push(exec([...args, ...plainArgs]))
  const [d, ...others] = await Promise.all(runs)
  const ctx = `placemat ${args.join(' ')}\ndaemon: ${d.stderr}\nothers: ${others.map((o) => o.stderr).join(' | ')}`
  expect(d.code, ctx).toBe(expectCode)
  for (const o of others) {
    expect(o.code, ctx).toBe(expectCode)
    if (args.includes('--json')) expect(JSON.parse(o.stdout), ctx).toEqual(JSON.parse(d.stdout))
    else expect(o.stdout, ctx).toBe(d.stdout)
    if (expectCode !== 0) expect(o.stderr, ctx).toBe(d.stderr)
  }
  return {...d, out: args.includes('--json') && d.stdout ? JSON.parse(d.stdout) : d.stdout}
}

async function raw(query: string) {
  const res = await fetch(`${server.url}/allocation_candidates?${query}`, {
    headers: {'x-auth-token': 'admin', 'openstack-api-version': 'placement latest'},
  })
  return res.json()
}

const hostsOf = (body: any) =>
  body.allocation_requests.map((ar: any) =>
    Object.keys(ar.allocations)
      .map((u) => `h${Number(u.slice(-3)) % 100}${Number(u.slice(-3)) >= 100 ? '-nic' : ''}`)
      .join('+'),
  )

describe('the flags are the Placement query', () => {
  const cases: Array<[string[], string]> = [
    [['--resources', 'VCPU:2,MEMORY_MB:1024'], 'resources=VCPU:2,MEMORY_MB:1024'],
    [['--resources', 'VCPU:2', '--limit', '2'], 'resources=VCPU:2&limit=2'],
    [
      ['--resources', 'VCPU:1', '--group', '_NET:resources=SRIOV_NET_VF:1,required=CUSTOM_PHYSNET0', '--group-policy', 'isolate'],
      'resources=VCPU:1&resources_NET=SRIOV_NET_VF:1&required_NET=CUSTOM_PHYSNET0&group_policy=isolate',
    ],
    [
      [
        '--group',
        '_C:resources=VCPU:1,MEMORY_MB:64',
        '--group',
        '_N:resources=SRIOV_NET_VF:1,required=in:CUSTOM_PHYSNET0,CUSTOM_PHYSNET1',
        '--group-policy',
        'none',
        '--same-subtree',
        '_C,_N',
      ],
      'resources_C=VCPU:1,MEMORY_MB:64&resources_N=SRIOV_NET_VF:1&required_N=in:CUSTOM_PHYSNET0,CUSTOM_PHYSNET1&group_policy=none&same_subtree=_C,_N',
    ],
    [['--resources', 'VCPU:1', '--required', '!CUSTOM_PHYSNET1'], 'resources=VCPU:1&required=!CUSTOM_PHYSNET1'],
    [['--resources', 'VCPU:1', '--root-required', '!CUSTOM_PHYSNET0'], 'resources=VCPU:1&root_required=!CUSTOM_PHYSNET0'],
    [
      ['--resources', 'VCPU:1', '--member-of', 'in:rack:k11,rack:k31'],
      `resources=VCPU:1&member_of=in:${nodeUuid('rack', 'k11')},${nodeUuid('rack', 'k31')}`,
    ],
    [['--resources', 'VCPU:1', '--member-of', '!row:r1'], `resources=VCPU:1&member_of=!${nodeUuid('row', 'r1')}`],
    [['--resources', 'VCPU:1', '--in-tree', 'h3'], `resources=VCPU:1&in_tree=${U(3)}`],
    [['--group', `1:resources=SRIOV_NET_VF:1,in_tree=h5`], `resources1=SRIOV_NET_VF:1&in_tree1=${U(5)}`],
  ]
  for (const [flags, query] of cases) {
    it(`${flags.join(' ')}`, async () => {
      const r = await all(['candidates', ...flags, '--json'])
      expect(r.out).toEqual(await raw(query))
      expect(r.out.allocation_requests.length).toBeGreaterThan(0)
    })
  }
})

describe('output', () => {
  it('a table: providers by name, amounts, what is left, the rack', async () => {
    const r = await all([
      'candidates',
      '--resources',
      'VCPU:2',
      '--group',
      '_NET:resources=SRIOV_NET_VF:1,required=CUSTOM_PHYSNET0',
      '--group-policy',
      'isolate',
    ])
    const lines = r.stdout.trim().split('\n')
    expect(lines[0]).toMatch(/^#\s+PROVIDERS\s+RESOURCES\s+LEFT AFTER\s+RACK$/)
    expect(lines).toHaveLength(4) // h1, h3, h5 have PHYSNET0
    expect(lines[1]).toContain('h1,h1-nic')
    expect(lines[1]).toContain('h1: VCPU=2; h1-nic: SRIOV_NET_VF=1')
    expect(lines[1]).toContain('h1: VCPU=6; h1-nic: SRIOV_NET_VF=1')
    expect(lines[1]).toMatch(/k11$/)
    expect(lines[2]).toContain('h3: VCPU=6')
    const withA1 = r.stdout.includes('h2') // h2 has PHYSNET1: not a candidate
    expect(withA1).toBe(false)
  })

  it('left after counts what others already use', async () => {
    const r = await all(['candidates', '--resources', 'VCPU:2', '-c', 'providers,free_after,row,room'])
    const h2 = r.stdout.split('\n').find((l) => l.startsWith('h2 '))!
    expect(h2).toMatch(/h2: VCPU=4\s+r1\s+m1$/) // 8 - 2 (A1) - 2
  })

  it('--ids: one line per candidate, its provider uuids', async () => {
    const r = await all(['candidates', '--resources', 'VCPU:1', '--group', '_NET:resources=SRIOV_NET_VF:1', '--group-policy', 'none'])
    const ids = await all([
      'candidates',
      '--resources',
      'VCPU:1',
      '--group',
      '_NET:resources=SRIOV_NET_VF:1',
      '--group-policy',
      'none',
      '--ids',
    ])
    const lines = ids.stdout.trim().split('\n')
    expect(lines).toHaveLength(r.stdout.trim().split('\n').length - 1)
    expect(lines[0]).toBe(`${U(1)} ${U(101)}`)
  })

  it('--yaml prints the Placement body', async () => {
    const r = await all(['candidates', '--resources', 'VCPU:1', '--limit', '1', '--yaml'])
    expect(r.stdout).toMatch(/^allocation_requests:/)
    expect(r.stdout).toContain('provider_summaries:')
  })

  it('no candidate: an empty table, exit 0', async () => {
    const r = await all(['candidates', '--resources', 'VCPU:100'])
    expect(r.stdout.trim().split('\n')).toHaveLength(1)
  })
})

describe('topology rules and ordering', () => {
  it('--same / --different at each level', async () => {
    const expectHosts = async (flags: string[], hosts: string[]) => {
      const r = await all(['candidates', '--resources', 'VCPU:1', ...flags, '--json'], {plain: true})
      expect(hostsOf(r.out), flags.join(' ')).toEqual(hosts)
    }
    await expectHosts(['--same', `rack:${A1}`], ['h1', 'h2'])
    await expectHosts(['--different', `rack:${A1}`], ['h3', 'h4', 'h5', 'h6'])
    await expectHosts(['--same', `row:${A1}`], ['h1', 'h2', 'h3'])
    await expectHosts(['--different', `row:${A1}`], ['h4', 'h5', 'h6'])
    await expectHosts(['--same', `room:${A1}`], ['h1', 'h2', 'h3', 'h4'])
    await expectHosts(['--different', `room:${A1}`], ['h5', 'h6'])
    await expectHosts(['--different', `row:${A1},${A2}`], ['h5', 'h6'])
    await expectHosts(['--same', `room:${A2}`, '--different', `row:${A2}`, '--different', `rack:${A1}`], ['h3'])
  })

  it('rules hold for granular groups on nested providers too (checked on the client)', async () => {
    const r = await all(
      [
        'candidates',
        '--group',
        '_C:resources=VCPU:1',
        '--group',
        '_N:resources=SRIOV_NET_VF:1',
        '--group-policy',
        'none',
        '--same-subtree',
        '_C,_N',
        '--same',
        `row:${A1}`,
        '--limit',
        '2',
        '--json',
      ],
      {plain: true},
    )
    expect(hostsOf(r.out)).toEqual(['h1+h1-nic', 'h2+h2-nic'])
    const d = await all(
      [
        'candidates',
        '--group',
        '_C:resources=VCPU:1',
        '--group',
        '_N:resources=SRIOV_NET_VF:1',
        '--group-policy',
        'none',
        '--same-subtree',
        '_C,_N',
        '--different',
        `row:${A1}`,
        '--json',
      ],
      {plain: true},
    )
    expect(hostsOf(d.out)).toEqual(['h4+h4-nic', 'h5+h5-nic', 'h6+h6-nic'])
  })

  it('--near and --far order by closeness (server-side on placemat, client-side on plain Placement)', async () => {
    const near = await all(['candidates', '--resources', 'VCPU:1', '--near', A2, '--json'], {plain: true})
    expect(hostsOf(near.out)).toEqual(['h4', 'h1', 'h2', 'h3', 'h5', 'h6'])
    const far = await all(['candidates', '--resources', 'VCPU:1', '--far', A1, '--json'], {plain: true})
    expect(hostsOf(far.out)).toEqual(['h5', 'h6', 'h4', 'h3', 'h1', 'h2'])
    const near1 = await all(['candidates', '--resources', 'VCPU:1', '--near', A1, '--limit', '3', '--json'], {plain: true})
    expect(hostsOf(near1.out)).toEqual(['h1', 'h2', 'h3'])
    const table = await all(['candidates', '--resources', 'VCPU:1', '--far', A1, '--limit', '2', '-c', 'providers,rack,row,room'])
    expect(table.stdout.trim().split('\n').slice(1)).toEqual(['h5         k31   r3   m2', 'h6         k31   r3   m2'])
  })

  it('errors: a same rule on a consumer that is nowhere (3), no topology on plain Placement (2), bad flags (2), bad query (6)', async () => {
    const nowhere = await all(['candidates', '--resources', 'VCPU:1', '--same', 'rack:b0000000-0000-4000-8000-000000000009'], {
      expectCode: 3,
    })
    expect(nowhere.stderr).toContain('has no allocations in any rack')
    // --near/--far a consumer that holds nothing: exit 3, not an unordered answer.
    for (const flag of ['--near', '--far']) {
      const unknown = await all(['candidates', '--resources', 'VCPU:1', flag, 'b0000000-0000-4000-8000-000000000009'], {
        expectCode: 3,
        plain: true,
      })
      expect(unknown.stderr).toContain(`${flag} b0000000-0000-4000-8000-000000000009: that consumer holds no allocations`)
    }
    const plain = await exec(['candidates', '--resources', 'VCPU:1', '--near', A1, '--url', proxy.url, '--token', 'admin'])
    expect(plain.code).toBe(2)
    expect(plain.stderr).toContain('give --layout FILE')
    await all(['candidates', '--resources', 'VCPU:1', '--same', 'shelf:x'], {expectCode: 2})
    await all(['candidates', '--group', 'resources=VCPU:1'], {expectCode: 2})
    await all(['candidates', '--group', '_X:VCPU:1'], {expectCode: 2})
    await all(['candidates', '--required', 'HW_CPU_X86_AVX2'], {expectCode: 6})
    await all(['candidates', '--resources', 'VCPU:x'], {expectCode: 6})
    await all(['candidates'], {expectCode: 2})
  })

  it('a rack, row or room that does not exist is an error (3), not an empty answer; provider list takes them by name too', async () => {
    const typo = await all(['candidates', '--resources', 'VCPU:1', '--member-of', 'in:rack:k11,rack:no-such-rack'], {
      expectCode: 3,
      plain: true,
    })
    expect(typo.stderr).toBe('placemat: no rack named no-such-rack\n')
    await all(['candidates', '--group', '_A:resources=VCPU:1,member_of=!row:nope'], {expectCode: 3, plain: true})
    await all(['claim', 'b0000000-0000-4000-8000-000000000077', '--resources', 'VCPU:1', '--member-of', 'room:m9'], {expectCode: 3})
    const listed = await all(['provider', 'list', '--member-of', 'rack:k11', '-c', 'name'])
    expect(listed.stdout.split('\n').slice(1).filter(Boolean).sort()).toEqual(['h1', 'h2'])
    await all(['provider', 'list', '--member-of', '!row:no-such-row'], {expectCode: 3})
  })
})
