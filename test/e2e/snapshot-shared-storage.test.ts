/**
 * A cloud whose disks come from providers shared through the racks' and rooms' aggregates
 * (MISC_SHARES_VIA_AGGREGATE: ceph-a in rack k1's, ceph-b in room m1's), with hosts flat and on
 * NUMA children, and hard placement groups (anti-affinity by host and by rack, spread over hosts)
 * whose members take their disks from the shared providers: exported, then imported into a new
 * file. The shared providers are no hosts: the import keeps the groups' rules as the cloud did,
 * and the copy is the cloud exported. And over plain Placement (which keeps no racks, given the
 * layout), the racks' views count the same hosts as placemat's: never the shared providers.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {startServer, type RunningServer} from '../../src/daemon/server.js'
import {placemat, type Result} from '../helpers/cli.js'
import {plainProxy} from '../helpers/claim-cloud.js'
import {nodeUuid} from '../../src/core/topology.js'

const ok = (r: Result) => {
  expect(r.code, r.stderr).toBe(0)
  return r.stdout
}

const LAYOUT = `rooms:
  - name: m1
    rows:
      - name: r1
        racks: [{name: k1, hosts: [cn-1, cn-2, cn-3]}, {name: k2, hosts: [cn-4, cn-5, cn-6]}]
`
const CLOUD = `aggregates:
  rack-k1: ${nodeUuid('rack', 'k1')}
  room-m1: ${nodeUuid('room', 'm1')}
providers:
  - {name: ceph-a, inventories: {DISK_GB: 100}, traits: [MISC_SHARES_VIA_AGGREGATE], aggregates: [rack-k1]}
  - {name: ceph-b, inventories: {DISK_GB: 100000}, traits: [MISC_SHARES_VIA_AGGREGATE], aggregates: [room-m1]}
${[1, 2, 3].map((i) => `  - {name: cn-${i}, inventories: {VCPU: 8, MEMORY_MB: 16384}}`).join('\n')}
${[4, 5, 6].map((i) => `  - {name: cn-${i}, children: [{name: cn-${i}_numa0, inventories: {VCPU: 8, MEMORY_MB: 16384}}]}`).join('\n')}
${LAYOUT}`
const C = (n: number) => `c0000000-0000-4000-8000-${String(n).padStart(12, '0')}`
const OWN = ['--project', 'p', '--user', 'u']

let dir: string
let source: string
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-snap-shared-'))
  source = path.join(dir, 'source.db')
  const db = ['--db', source]
  fs.writeFileSync(path.join(dir, 'cloud.yaml'), CLOUD)
  ok(await placemat(['db', 'init', ...db]))
  ok(await placemat(['apply', path.join(dir, 'cloud.yaml'), ...db]))
  ok(await placemat(['group', 'create', 'apart', '--policy', 'anti-affinity', '--level', 'host', ...db]))
  ok(await placemat(['group', 'create', 'racks', '--policy', 'anti-affinity', '--level', 'rack', ...db]))
  ok(await placemat(['group', 'create', 'even', '--policy', 'spread', '--max-skew', '1', '--level', 'host', ...db]))
  // Five members on five hosts, their disks from ceph-a (rack k1) and ceph-b (room m1).
  for (let i = 1; i <= 5; i++) ok(await placemat(['claim', C(i), '--group', 'apart', '--resources', 'VCPU:1,DISK_GB:10', ...OWN, ...db]))
  // Disks too large for ceph-a: from ceph-b, which is in no rack.
  for (const i of [6, 7]) ok(await placemat(['claim', C(i), '--group', 'racks', '--resources', 'VCPU:1,DISK_GB:200', ...OWN, ...db]))
  // One member a host, the NUMA hosts' included.
  for (let i = 11; i <= 16; i++) ok(await placemat(['claim', C(i), '--group', 'even', '--resources', 'VCPU:1,DISK_GB:1', ...OWN, ...db]))
  // A volume: shared resources alone.
  ok(await placemat(['claim', C(20), '--resources', 'DISK_GB:50', ...OWN, ...db]))
}, 120_000)
afterAll(() => {
  if (dir) fs.rmSync(dir, {recursive: true, force: true})
})

describe('export then import of a cloud with shared storage and hard groups', () => {
  it('imports (exit 0) and the copy is the cloud exported', async () => {
    const groups = ok(await placemat(['group', 'list', '--db', source]))
    expect(groups).not.toMatch(/breach/)
    const consumers = ok(await placemat(['consumer', 'list', '--db', source]))
    // The shared providers gave disks to the groups' members.
    const usage = JSON.parse(ok(await placemat(['usage', 'show', 'ceph-b', '--json', '--db', source])))
    expect(usage.usages.DISK_GB).toBeGreaterThanOrEqual(400)
    const snapFile = path.join(dir, 'snap.yaml')
    ok(await placemat(['export', '--db', source, '-o', snapFile]))
    const target = path.join(dir, 'imported.db')
    const imp = await placemat(['import', snapFile, '--db', target])
    expect(imp.stderr).toBe('')
    expect(imp.code).toBe(0)
    expect(imp.stdout).toMatch(/: 11 providers, 14 consumers, /)
    expect(ok(await placemat(['export', '--db', target]))).toBe(fs.readFileSync(snapFile, 'utf8'))
    expect(ok(await placemat(['group', 'list', '--db', target]))).toBe(groups)
    expect(ok(await placemat(['consumer', 'list', '--db', target]))).toBe(consumers)
  }, 120_000)

  it('a hard group broken on a host is still refused, and named by the host, never the shared provider', async () => {
    const snap = ok(await placemat(['export', '--db', source, '--json']))
    const doc = JSON.parse(snap)
    // c1 and c11 are both on cn-1 (and both take their disks from ceph-a).
    doc.groups.push({name: 'pair', policy: 'anti-affinity', level: 'host', soft: false, generation: 1, members: [C(1), C(11)]})
    const r = await placemat(['import', '-', '--db', path.join(dir, 'broken.db')], {input: JSON.stringify(doc)})
    expect(r.code).toBe(4)
    expect(r.stderr).toMatch(
      `group pair (anti-affinity by host): 2 members in host cn-1 (at most 1) [cn-1: ${C(1)}, ${C(11)}]; nothing imported`,
    )
  }, 60_000)
})

describe('the topology over plain Placement', () => {
  let server: RunningServer
  let proxy: {url: string; close(): Promise<void>}
  beforeAll(async () => {
    const served = path.join(dir, 'served.db')
    fs.copyFileSync(source, served)
    server = await startServer({db: served, host: '127.0.0.1', port: 0, auth: 'noauth2'})
    proxy = await plainProxy(server.url)
    fs.writeFileSync(path.join(dir, 'layout.yaml'), LAYOUT)
  }, 60_000)
  afterAll(async () => {
    await proxy?.close()
    await server?.close()
  })

  it('topology show given the layout: the same racks, hosts and totals as placemat, the shared providers in none', async () => {
    const mine = JSON.parse(ok(await placemat(['topology', 'show', '--json', '--url', server.url, '--token', 'admin'])))
    const plain = JSON.parse(
      ok(await placemat(['topology', 'show', '--json', '--layout', path.join(dir, 'layout.yaml'), '--url', proxy.url, '--token', 'admin'])),
    )
    expect(JSON.stringify(mine.topology)).not.toMatch(/ceph/)
    expect(plain.topology).toEqual(mine.topology)
  }, 60_000)
})
