/**
 * Consumers as a listing (`consumer list`, `consumer show`), a host described in full
 * (`host describe`), and the names apply files give aggregates shown again where aggregates
 * are listed: the real binary on a daemon, on a file (--db) and on plain Placement.
 */
import fs from 'node:fs'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {placemat as run, type Result} from '../helpers/db-tools.js'
import {newDb, startEndpoints, stopEndpoints, type Endpoints} from '../helpers/endpoints.js'
import {nodeUuid} from '../../src/core/topology.js'
import {aggregateUuid, providerUuid} from '../../src/core/uuids.js'

const C = (i: number) => `66666666-0000-4000-8000-${String(i).padStart(12, '0')}`
const CEPH = '6c3a1a52-4d8e-4b7e-9a51-0f4b8a1c2d01'
const FAST = aggregateUuid('fast-net')

const CLOUD = `aggregates:
  ceph-a: ${CEPH}
providers:
  - name: cn1
    inventories: {VCPU: 8, MEMORY_MB: 16384}
    traits: [HW_CPU_X86_AVX2]
    aggregates: [ceph-a, fast-net]
    children:
      - name: cn1_nic
        inventories: {SRIOV_NET_VF: 4}
  - name: cn2
    inventories: {VCPU: 8}
    aggregates: [ceph-a]
`
const LAYOUT =
  'rooms:\n  - name: m1\n    rows:\n      - name: r1\n        racks:\n          - {name: k1, hosts: [cn1]}\n          - {name: k2, hosts: [cn2]}\n'

async function ok(args: string[]): Promise<Result> {
  const r = await run(args)
  expect(r.code, `placemat ${args.join(' ')}\n${r.stderr}\n${r.stdout.slice(0, 2000)}`).toBe(0)
  return r
}

describe('consumers, hosts described, and named aggregates on the command line', () => {
  let e: Endpoints
  let file: string[]
  const placemat = () => [
    {what: 'a daemon', args: e.daemon},
    {what: 'a file', args: file},
  ]
  const claim = (i: number, more: string[], args: string[]) =>
    ok(['claim', C(i), ...more, '--project', i === 2 ? 'p2' : 'p1', '--user', 'u1', '--consumer-type', 'INSTANCE', ...args])

  beforeAll(async () => {
    e = await startEndpoints('placemat-cli-consumers-')
    file = ['--db', path.join(e.dir, 'f.db')]
    await newDb(path.join(e.dir, 'f.db'))
    fs.writeFileSync(path.join(e.dir, 'cloud.yaml'), CLOUD)
    fs.writeFileSync(path.join(e.dir, 'layout.yaml'), LAYOUT)
    for (const {args} of [...placemat(), {args: e.plain}]) {
      const plain = args === e.plain
      await ok(['apply', path.join(e.dir, 'cloud.yaml'), ...args])
      if (!plain) {
        await ok(['topology', 'apply', path.join(e.dir, 'layout.yaml'), ...args])
        await ok(['group', 'create', 'web', '--policy', 'anti-affinity', '--level', 'host', ...args])
      }
      const group = plain ? [] : ['--group', 'web']
      await claim(1, ['--resources', 'VCPU:2,MEMORY_MB:1024', '--required', 'HW_CPU_X86_AVX2', ...group], args)
      await claim(2, ['--resources', 'VCPU:1', '--in-tree', providerUuid('cn2'), ...group], args)
      await claim(3, ['--resources', 'VCPU:1,SRIOV_NET_VF:1'], args)
    }
  })
  afterAll(() => stopEndpoints(e))

  it('consumer list: every consumer, its hosts and groups; --provider, --project and --group keep some', async () => {
    for (const {what, args} of placemat()) {
      const list = await ok(['consumer', 'list', '-f', 'value', '-c', 'uuid,project,resources,hosts,groups', ...args])
      expect(list.stdout, what).toBe(
        `${C(1)} p1 VCPU=2,MEMORY_MB=1024 cn1 web\n${C(2)} p2 VCPU=1 cn2 web\n${C(3)} p1 VCPU=1,SRIOV_NET_VF=1 cn1 None\n`,
      )
      expect((await ok(['consumer', 'list', '--provider', 'cn1', '--ids', ...args])).stdout, what).toBe(`${C(1)}\n${C(3)}\n`)
      expect((await ok(['consumer', 'list', '--provider', 'cn1_nic', '--ids', ...args])).stdout, what).toBe(`${C(3)}\n`)
      expect((await ok(['consumer', 'list', '--project', 'p1', '--group', 'web', '--ids', ...args])).stdout, what).toBe(`${C(1)}\n`)
      const json = JSON.parse((await ok(['consumer', 'list', '--group', 'web', '--json', ...args])).stdout)
      expect(
        json.consumers.map((c: any) => [c.uuid, c.consumer_type, c.hosts, c.groups]),
        what,
      ).toEqual([
        [C(1), 'INSTANCE', ['cn1'], ['web']],
        [C(2), 'INSTANCE', ['cn2'], ['web']],
      ])
      const missing = await run(['consumer', 'list', '--group', 'nope', ...args])
      expect([missing.code, missing.stderr], what).toEqual([3, "placemat: No placement group named 'nope'.\n"])
    }
  })

  it("consumer list on plain Placement: read from the providers' allocations, without groups", async () => {
    const list = await ok(['consumer', 'list', '-f', 'value', '-c', 'uuid,project,hosts,groups', ...e.plain])
    expect(list.stdout).toBe(`${C(1)} p1 cn1 None\n${C(2)} p2 cn2 None\n${C(3)} p1 cn1 None\n`)
    expect(list.stderr).toBe('placemat: warning: plain OpenStack Placement keeps no placement groups: the groups column is empty\n')
    expect((await ok(['consumer', 'list', '--provider', 'cn1', '--project', 'p1', '--ids', ...e.plain])).stdout).toBe(`${C(1)}\n${C(3)}\n`)
    const json = JSON.parse((await ok(['consumer', 'list', '--provider', 'cn2', '--json', ...e.plain])).stdout)
    expect(json.consumers).toMatchObject([{uuid: C(2), project_id: 'p2', consumer_type: 'INSTANCE', hosts: ['cn2'], groups: null}])
    const group = await run(['consumer', 'list', '--group', 'web', ...e.plain])
    expect(group.code).toBe(2)
    expect(group.stderr).toMatch(/plain OpenStack Placement has none to list consumers by/)
  })

  it('consumer show: who it is, its groups, its hosts and where they are, what it holds on each provider', async () => {
    for (const {what, args} of placemat()) {
      const shown = await ok(['consumer', 'show', C(3), ...args])
      expect(shown.stdout, what).toBe(
        [
          `uuid        ${C(3)}`,
          'project     p1',
          'user        u1',
          'type        INSTANCE',
          'generation  1',
          'groups      ',
          'hosts       cn1 (rack k1, row r1, room m1)',
          '',
          'PROVIDER  UUID                                  HOST  RESOURCES',
          `cn1       ${providerUuid('cn1')}  cn1   VCPU=1`,
          `cn1_nic   ${providerUuid('cn1_nic')}  cn1   SRIOV_NET_VF=1`,
          '',
        ].join('\n'),
      )
      expect((await ok(['consumer', 'show', C(1), '-f', 'value', '-c', 'groups', ...args])).stdout, what).toBe('web\n')
    }
    const plain = JSON.parse((await ok(['consumer', 'show', C(1), '--json', ...e.plain])).stdout)
    expect(plain).toMatchObject({
      uuid: C(1),
      project_id: 'p1',
      groups: null,
      hosts: [{name: 'cn1', rack: null, disabled: false}],
      providers: [{name: 'cn1', host: 'cn1'}],
    })
    const none = await run(['consumer', 'show', C(9), ...e.daemon])
    expect(none.code).toBe(3)
  })

  it('host describe: status, place, traits, named aggregates, inventories with usage, consumers and their groups', async () => {
    for (const {what, args} of placemat()) {
      const d = await ok(['host', 'describe', 'cn1', ...args])
      expect(d.stdout, what).toContain(
        `aggregates    ceph-a (${CEPH}), fast-net (${FAST}), rack k1 (${nodeUuid('rack', 'k1')}), row r1 (${nodeUuid('row', 'r1')}), room m1 (${nodeUuid('room', 'm1')})\n`,
      )
      expect(d.stdout, what).toContain('traits        HW_CPU_X86_AVX2\n')
      expect(d.stdout, what).toContain(
        'PROVIDER  CLASS         USED/CAPACITY  TOTAL  RESERVED  RATIO\ncn1       VCPU          3/8                8         0      1\n',
      )
      expect(d.stdout, what).toContain('cn1_nic   SRIOV_NET_VF  1/4                4         0      1\n')
      expect(d.stdout, what).toContain(`${C(1)}  p1       u1    INSTANCE  VCPU=2,MEMORY_MB=1024  web\n`)
      const json = JSON.parse((await ok(['host', 'describe', 'cn2', '--json', ...args])).stdout)
      expect(json, what).toMatchObject({
        name: 'cn2',
        disabled: false,
        rack: 'k2',
        consumers: [{uuid: C(2), resources: {VCPU: 1}, groups: ['web']}],
      })
    }
    // Plain Placement: the same record from the host's tree, without what only placemat keeps.
    const plain = JSON.parse((await ok(['host', 'describe', 'cn1', '--json', ...e.plain])).stdout)
    expect(plain.aggregates).toEqual([CEPH, FAST].map((uuid) => ({uuid, name: null, level: null, label: null})))
    expect(plain.consumers.map((c: any) => [c.uuid, c.project_id, c.groups])).toEqual([
      [C(1), 'p1', null],
      [C(3), 'p1', null],
    ])
    const child = await run(['host', 'describe', 'cn1_nic', ...e.daemon])
    expect(child.code).toBe(6)
  })

  it('names apply gave aggregates are kept and shown beside their uuids; other processes see them; plain Placement says it keeps none', async () => {
    for (const {what, args} of placemat()) {
      const listed = await ok(['aggregate', 'list', 'cn1', '-f', 'value', ...args])
      expect(listed.stdout, what).toBe(
        `${CEPH} ceph-a\n${FAST} fast-net\n${nodeUuid('rack', 'k1')} rack_k1\n${nodeUuid('row', 'r1')} row_r1\n${nodeUuid('room', 'm1')} room_m1\n`,
      )
      expect((await ok(['provider', 'show', 'cn2', '-f', 'value', '-c', 'aggregates', ...args])).stdout, what).toMatch(
        /^ceph-a \(6c3a1a52-/,
      )
      expect((await ok(['apply', path.join(e.dir, 'cloud.yaml'), ...args])).stdout, what).toBe(
        'No changes: everything in the file is up to date.\n',
      )
    }
    // A file written by another process (the command line on the daemon's own database): the daemon follows it.
    const renamed = path.join(e.dir, 'renamed.yaml')
    fs.writeFileSync(renamed, `aggregates:\n  ceph-b: ${CEPH}\nproviders: []\n`)
    const applied = await ok(['apply', renamed, '--db', path.join(e.dir, 'daemon.db')])
    expect(applied.stdout).toBe(
      `Plan: providers 0 to create, 0 to update, 0 to delete; 1 aggregate name to keep.\n~ aggregate name ${CEPH}: ceph-a -> ceph-b\nApplying 1 operations in one transaction...\n` +
        applied.stdout.split('\n').at(-2) +
        '\n',
    )
    expect((await ok(['aggregate', 'list', 'cn2', '-f', 'value', '-c', 'name', ...e.daemon])).stdout).toBe(
      'ceph-b\nrack_k2\nrow_r1\nroom_m1\n',
    )
    // Plain Placement: nowhere to keep them, said once on stderr; listings show the uuids alone.
    const plain = await ok(['apply', path.join(e.dir, 'cloud.yaml'), ...e.plain])
    expect(plain.stderr).toBe(
      'placemat: warning: plain OpenStack Placement keeps no aggregate names: the 2 names the file gives aggregates are not kept (listings show their uuids)\n',
    )
    expect((await ok(['aggregate', 'list', 'cn1', '-f', 'value', ...e.plain])).stdout).toBe(`${CEPH} None\n${FAST} None\n`)
  })
})
