/**
 * A small datacenter as most OpenStack clouds are built, through the real binary on a daemon and
 * on a file (--db): 1 room, 2 rows, 4 racks, 16 computes whose VCPU and MEMORY_MB sit on two NUMA
 * children each (two with a GPU grandchild), and one Ceph-like provider sharing DISK_GB with every
 * compute through an aggregate. Every instance takes its disk from the shared provider; the rules
 * by rack, row and host count the computes, never the storage, and a volume (shared resources
 * alone) is on no host.
 */
import fs from 'node:fs'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {placemat as run, type Result} from '../helpers/db-tools.js'
import {newDb, startEndpoints, stopEndpoints, type Endpoints} from '../helpers/endpoints.js'

const COMPUTES = Array.from({length: 16}, (_, i) => `cn-${String(i + 1).padStart(2, '0')}`)
const RACKS = ['rack-a1', 'rack-a2', 'rack-b1', 'rack-b2']
const rackOf = (host: string) => RACKS[Math.floor((Number(host.slice(3)) - 1) / 4)]
const rowOf = (host: string) => (rackOf(host).startsWith('rack-a') ? 'row-a' : 'row-b')

function cloudFile(): string {
  const lines = [
    'providers:',
    '  - name: ceph-1',
    '    inventories: {DISK_GB: 100000}',
    '    traits: [MISC_SHARES_VIA_AGGREGATE]',
    '    aggregates: [ceph]',
  ]
  for (const cn of COMPUTES) {
    lines.push(`  - name: ${cn}`, '    aggregates: [ceph]', '    children:')
    for (const n of [0, 1]) {
      lines.push(`      - name: ${cn}_numa${n}`, '        inventories: {VCPU: 16, MEMORY_MB: 65536}', '        traits: [HW_NUMA_ROOT]')
      if (n === 0 && (cn === 'cn-01' || cn === 'cn-09'))
        lines.push('        children:', `          - name: ${cn}_gpu`, '            inventories: {VGPU: 4}')
    }
  }
  return lines.join('\n') + '\n'
}

function layoutFile(): string {
  const rack = (name: string) => `{name: ${name}, hosts: [${COMPUTES.filter((h) => rackOf(h) === name).join(', ')}]}`
  return `rooms:\n  - name: dc-1\n    rows:\n      - name: row-a\n        racks: [${rack('rack-a1')}, ${rack('rack-a2')}]\n      - name: row-b\n        racks: [${rack('rack-b1')}, ${rack('rack-b2')}]\n`
}

const INSTANCE = 'VCPU:4,MEMORY_MB:8192,DISK_GB:40'
const uuid = (group: number, i: number) => `${String(group).padStart(8, '0')}-0000-4000-8000-${String(i).padStart(12, '0')}`

async function ok(args: string[]): Promise<Result> {
  const r = await run(args)
  expect(r.code, `placemat ${args.join(' ')}\n${r.stderr}\n${r.stdout.slice(0, 2000)}`).toBe(0)
  return r
}

describe('rack, row and host rules on a cloud with shared storage and NUMA trees', () => {
  let e: Endpoints
  const targets = () => [
    {what: 'a daemon', args: e.daemon},
    {what: 'a file', args: ['--db', path.join(e.dir, 'f.db')]},
  ]

  beforeAll(async () => {
    e = await startEndpoints('placemat-shared-storage-')
    await newDb(path.join(e.dir, 'f.db'))
    fs.writeFileSync(path.join(e.dir, 'cloud.yaml'), cloudFile())
    fs.writeFileSync(path.join(e.dir, 'layout.yaml'), layoutFile())
    for (const {args} of targets()) {
      await ok(['apply', path.join(e.dir, 'cloud.yaml'), ...args])
      await ok(['topology', 'apply', path.join(e.dir, 'layout.yaml'), ...args])
      await ok(['group', 'create', 'db', '--policy', 'anti-affinity', '--level', 'rack', ...args])
      await ok(['group', 'create', 'web', '--policy', 'spread', '--max-skew', '1', '--level', 'row', ...args])
      await ok(['group', 'create', 'cache', '--policy', 'max-per', '--max-per', '2', '--level', 'host', ...args])
    }
  })
  afterAll(() => stopEndpoints(e))

  const claim = (consumer: string, group: string | undefined, resources: string, args: string[]) =>
    run(['claim', consumer, ...(group ? ['--group', group] : []), '--resources', resources, '--project', 'p', '--user', 'u', ...args])

  /** Each member's hosts, from the group's record. */
  async function placements(group: string, args: string[]): Promise<Map<string, string[]>> {
    const g = JSON.parse((await ok(['group', 'show', group, '--json', ...args])).stdout)
    expect(g.violations, `group ${group}`).toEqual([])
    return new Map(g.placements.map((p: {consumer: string; hosts: string[]}) => [p.consumer, p.hosts]))
  }

  it('anti-affinity by rack: 4 members in 4 racks, a fifth refused; every one takes its disk from the shared provider', async () => {
    for (const {what, args} of targets()) {
      for (let i = 1; i <= 4; i++)
        await ok(['claim', uuid(1, i), '--group', 'db', '--resources', INSTANCE, '--project', 'p', '--user', 'u', ...args])
      const at = await placements('db', args)
      expect(
        [...at.values()].every((hosts) => hosts.length === 1 && COMPUTES.includes(hosts[0])),
        what,
      ).toBe(true)
      expect(new Set([...at.values()].map(([h]) => rackOf(h))).size, what).toBe(4)
      for (const c of at.keys()) {
        const held = JSON.parse((await ok(['allocation', 'show', c, '--json', ...args])).stdout)
        expect(
          Object.values(held.allocations).some((a: any) => a.resources.DISK_GB === 40),
          what,
        ).toBe(true)
      }
      const fifth = await claim(uuid(1, 5), 'db', INSTANCE, args)
      expect(fifth.code, what).toBe(4)
      expect(fifth.stderr, what).toMatch(/anti-affinity rule of group db \(by rack\)/)
      expect(fifth.stderr, what).not.toMatch(/ceph-1|outside the topology|in no rack/)
    }
  })

  it('spread by row: 8 members 4 and 4', async () => {
    for (const {what, args} of targets()) {
      for (let i = 1; i <= 8; i++)
        await ok(['claim', uuid(2, i), '--group', 'web', '--resources', INSTANCE, '--project', 'p', '--user', 'u', ...args])
      const at = await placements('web', args)
      const rows = [...at.values()].map(([h]) => rowOf(h))
      expect(rows.filter((r) => r === 'row-a').length, what).toBe(4)
      expect(rows.filter((r) => r === 'row-b').length, what).toBe(4)
    }
  })

  it('at most 2 per host: 12 members, no compute over 2', async () => {
    for (const {what, args} of targets()) {
      for (let i = 1; i <= 12; i++)
        await ok(['claim', uuid(3, i), '--group', 'cache', '--resources', INSTANCE, '--project', 'p', '--user', 'u', ...args])
      const at = await placements('cache', args)
      expect(at.size, what).toBe(12)
      const perHost = new Map<string, number>()
      for (const hosts of at.values()) {
        expect(hosts.length, what).toBe(1)
        expect(COMPUTES, what).toContain(hosts[0])
        perHost.set(hosts[0], (perHost.get(hosts[0]) ?? 0) + 1)
      }
      expect(Math.max(...perHost.values()), what).toBeLessThanOrEqual(2)
    }
  })

  it('a volume (shared resources alone) joins a group, is on no host, and is reported as hostless', async () => {
    for (const {what, args} of targets()) {
      const vol = uuid(4, 1)
      await ok(['claim', vol, '--resources', 'DISK_GB:500', '--project', 'p', '--user', 'u', ...args])
      await ok(['group', 'add', 'db', vol, ...args])
      const g = JSON.parse((await ok(['group', 'show', 'db', '--json', ...args])).stdout)
      expect(g.violations, what).toEqual([])
      expect(g.hostless, what).toEqual([vol])
      expect(
        g.placements.find((p: any) => p.consumer === vol),
        what,
      ).toMatchObject({hosts: [], rack: [], hostless: true})
      expect((await ok(['group', 'show', 'db', ...args])).stdout, what).toContain(
        `hostless (only shared resources, the rule skips them): ${vol}`,
      )
      const shown = JSON.parse((await ok(['consumer', 'show', vol, '--json', ...args])).stdout)
      expect(shown.hosts, what).toEqual([])
      expect(shown.providers, what).toMatchObject([{name: 'ceph-1', host: null}])
    }
  })

  it('claim --count 4 --spread rack decides hosts as the groups do: 4 racks, the storage in none', async () => {
    for (const {what, args} of targets()) {
      const r = await ok([
        'claim',
        '--count',
        '4',
        '--spread',
        'rack',
        'sp',
        '--resources',
        INSTANCE,
        '--project',
        'p',
        '--user',
        'u',
        '--json',
        ...args,
      ])
      const out = JSON.parse(r.stdout)
      expect(new Set(out.claims.map((c: any) => c.rack)).size, what).toBe(4)
      for (const c of out.claims) {
        const shown = JSON.parse((await ok(['claim', 'show', c.consumer_uuid, '--json', ...args])).stdout)
        expect(shown.topology.rack, what).toEqual([c.rack])
        expect(
          Object.values(shown.allocations).some((a: any) => a.resources.DISK_GB === 40),
          what,
        ).toBe(true)
      }
    }
  })

  it('consumer list names computes only; audit finds nothing; the rack views hold the computes, not the storage', async () => {
    for (const {what, args} of targets()) {
      const list = JSON.parse((await ok(['consumer', 'list', '--json', ...args])).stdout)
      const hosts = new Set(list.consumers.flatMap((c: any) => c.hosts))
      expect(hosts.size, what).toBeGreaterThan(0)
      for (const h of hosts) expect(COMPUTES, what).toContain(h)
      expect((await ok(['consumer', 'list', '-f', 'value', '-c', 'hosts', ...args])).stdout, what).not.toContain('ceph')
      const audit = await ok(['audit', '--exit-code', ...args])
      expect(audit.stdout + audit.stderr, what).not.toMatch(/ceph-1/)
      expect((await ok(['host', 'list', '-f', 'value', '-c', 'name', ...args])).stdout, what).toBe(COMPUTES.join('\n') + '\n')
      const listed = JSON.parse((await ok(['host', 'list', '--json', ...args])).stdout).hosts
      expect(
        listed.map((h: any) => [h.name, h.rack, h.row]),
        what,
      ).toEqual(COMPUTES.map((h) => [h, rackOf(h), rowOf(h)]))
      const notHost = await run(['host', 'show', 'ceph-1', ...args])
      expect([notHost.code, notHost.stderr], what).toEqual([6, expect.stringMatching(/ceph-1 is not a host: it shares its inventory/)])
      const top = JSON.parse((await ok(['topology', 'show', '--json', ...args])).stdout)
      expect(JSON.stringify(top), what).not.toContain('ceph-1')
    }
  })
})
