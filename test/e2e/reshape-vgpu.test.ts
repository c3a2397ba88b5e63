/**
 * The VGPU fixture plan (fixtures/reshape/vgpu.yaml) on the real binary: offline on a
 * file and online against a daemon, dry run (prints before/after, changes nothing) and
 * for real (the VGPU inventory and the allocations move to the new children).
 */
import fs from 'node:fs'
import path from 'node:path'
import YAML from 'yaml'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {startServer} from '../../src/daemon/server.js'
import {VGPU_PLAN, dumpDb, placemat, startVgpu} from '../helpers/db-tools.js'
import {CN, PGPU0, PGPU1, VM_A, VM_B} from '../helpers/vgpu-fixture.js'
import {providerUuid} from '../../src/core/uuids.js'

const PLAN = VGPU_PLAN

let vgpu: Awaited<ReturnType<typeof startVgpu>>
let file: string
let online: string[]
let offline: string[]

beforeAll(async () => {
  vgpu = await startVgpu('placemat-vgpu-')
  ;({file, online, offline} = vgpu)
})

afterAll(() => vgpu?.close())

describe('placemat reshape fixtures/reshape/vgpu.yaml', () => {
  it('--dry-run prints the tree before and after and changes nothing', async () => {
    const before = dumpDb(file)
    const exportBefore = (await placemat(['export', ...online])).stdout
    const r = await placemat(['reshape', PLAN, '--dry-run', ...offline])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^Before:\n {2}compute-vgpu-1 {2}0d0d0d0d-0000-4000-8000-000000000001 {2}generation 3\n(.*\n){3}/m)
    expect(r.stdout).toMatch(/ {6}VGPU +6\/8 {2}total 8, max 4/)
    expect(r.stdout).toMatch(
      /After:\n {2}compute-vgpu-1 .*generation 6\n {6}MEMORY_MB .*\n {6}VCPU .*\n {4}compute-vgpu-1_pgpu0 .*generation 3 {2}\(new\)\n {8}VGPU +2\/4/,
    )
    expect(r.stdout).toMatch(/compute-vgpu-1_pgpu1 .*\(new\)\n {8}VGPU +4\/4/)
    expect(r.stdout).toContain(`${VM_A}  VGPU:2  compute-vgpu-1 -> compute-vgpu-1_pgpu0`)
    expect(r.stdout).toContain(`${VM_B}  VGPU:4  compute-vgpu-1 -> compute-vgpu-1_pgpu1`)
    expect(r.stdout).toMatch(/Conflicts:\n {2}none/)
    expect(r.stdout).toContain('Nothing was changed (dry run).')
    expect(dumpDb(file)).toBe(before)

    // The same plan, the same report online (but for the transport), and nothing changes there either.
    const [d, f] = await Promise.all([
      placemat(['reshape', PLAN, '--dry-run', '--json', ...online]),
      placemat(['reshape', PLAN, '--dry-run', '--json', ...offline]),
    ])
    expect(d.code, d.stderr).toBe(0)
    const dj = JSON.parse(d.stdout)
    const fj = JSON.parse(f.stdout)
    expect(dj.transaction).toBe('online')
    expect(fj.transaction).toBe('offline')
    expect({...dj, transaction: null}).toEqual({...fj, transaction: null})
    expect(fj.after.map((p: any) => [p.name, p.depth, p.created])).toEqual([
      ['compute-vgpu-1', 0, false],
      ['compute-vgpu-1_pgpu0', 1, true],
      ['compute-vgpu-1_pgpu1', 1, true],
    ])
    expect((await placemat(['export', ...online])).stdout).toBe(exportBefore)
    expect(dumpDb(file)).toBe(before)
  })

  it('for real: the inventory and the allocations move, offline and online alike', async () => {
    // A daemon serving the same file while the offline reshape commits.
    const neighbour = await startServer({db: file, host: '127.0.0.1', port: 0, auth: 'noauth2'})
    try {
      const seen = await fetch(`${neighbour.url}/allocations/${VM_A}`, {headers: {'x-auth-token': 'admin'}}).then((r) => r.json())
      expect(Object.keys(seen.allocations)).toEqual([CN])

      const [d, f] = await Promise.all([placemat(['reshape', PLAN, ...online]), placemat(['reshape', PLAN, ...offline])])
      expect(d.code, d.stderr).toBe(0)
      expect(f.code, f.stderr).toBe(0)
      expect(f.stdout.trimEnd()).toMatch(/Reshaped\.$/)

      const ex = await placemat(['export', ...offline])
      expect(ex.code, ex.stderr).toBe(0)
      const snap = YAML.parse(ex.stdout)
      const byUuid = Object.fromEntries(snap.providers.map((p: any) => [p.uuid, p]))
      expect(Object.keys(byUuid[CN].inventories).sort()).toEqual(['MEMORY_MB', 'VCPU'])
      expect(byUuid[PGPU0]).toMatchObject({
        name: 'compute-vgpu-1_pgpu0',
        parent_provider_uuid: CN,
        inventories: {VGPU: {total: 4, max_unit: 4}},
      })
      expect(byUuid[PGPU1]).toMatchObject({name: 'compute-vgpu-1_pgpu1', parent_provider_uuid: CN, inventories: {VGPU: {total: 4}}})
      const consumers = Object.fromEntries(snap.consumers.map((c: any) => [c.uuid, c]))
      expect(consumers[VM_A].allocations).toEqual({[CN]: {MEMORY_MB: 8192, VCPU: 4}, [PGPU0]: {VGPU: 2}})
      expect(consumers[VM_B].allocations).toEqual({[CN]: {MEMORY_MB: 16384, VCPU: 8}, [PGPU1]: {VGPU: 4}})
      expect(consumers[VM_A]).toMatchObject({generation: 2, consumer_type: 'INSTANCE'})

      // Online gave exactly the same state (same uuids, same generations).
      expect((await placemat(['export', ...online])).stdout).toBe(ex.stdout)

      // The daemon on the same file sees the offline commit at once.
      const after = await fetch(`${neighbour.url}/allocations/${VM_A}`, {headers: {'x-auth-token': 'admin'}}).then((r) => r.json())
      expect(after.allocations[PGPU0].resources).toEqual({VGPU: 2})
      const usages = await fetch(`${neighbour.url}/resource_providers/${PGPU1}/usages`, {headers: {'x-auth-token': 'admin'}}).then((r) =>
        r.json(),
      )
      expect(usages.usages).toEqual({VGPU: 4})

      // Run again (twice, offline and online): the moves are in place, so it is done (exit 0) and nothing changes.
      const dump = dumpDb(file)
      for (const t of [offline, offline, online]) {
        const again = await placemat(['reshape', PLAN, ...t])
        expect(again.code, again.stderr).toBe(0)
        expect(again.stdout.trim()).toBe('Already done: every move of the plan is in place. Nothing was changed.')
      }
      expect(JSON.parse((await placemat(['reshape', PLAN, '--json', ...offline])).stdout)).toMatchObject({done: true, applied: false})
      expect(dumpDb(file)).toBe(dump)
    } finally {
      await neighbour.close()
    }
  })
})

describe('placemat reshape of part of an idle inventory to a new provider', () => {
  const GPU1 = providerUuid('gpu1')
  const HOSTS = 'providers:\n  - name: cn\n    inventories: {VCPU: 8}\n    children:\n      - {name: gpu0, inventories: {VGPU: 8}}\n'
  const MOVE = 'moves: [{from: gpu0, to: gpu1, parent: cn, resources: {VGPU: 2}}]\n'

  it('the dry run shows the uuid the run creates; run again, it is already done (offline and online)', async () => {
    const hosts = path.join(vgpu.dir, 'idle-hosts.yaml')
    const plan = path.join(vgpu.dir, 'idle-move.yaml')
    fs.writeFileSync(hosts, HOSTS)
    fs.writeFileSync(plan, MOVE)
    const db = path.join(vgpu.dir, 'idle.db')
    expect((await placemat(['db', 'init', '--db', db])).code).toBe(0)
    const daemon = await startServer({db: path.join(vgpu.dir, 'idle-daemon.db'), host: '127.0.0.1', port: 0, auth: 'noauth2'})
    try {
      for (const t of [
        ['--db', db],
        ['--url', daemon.url, '--token', 'admin'],
      ]) {
        expect((await placemat(['apply', hosts, ...t])).code).toBe(0)
        const dry = await placemat(['reshape', plan, '--dry-run', ...t])
        expect(dry.code, dry.stderr).toBe(0)
        expect(dry.stdout).toContain(`+ gpu1  ${GPU1}  under cn`)
        const run = await placemat(['reshape', plan, ...t])
        expect(run.code, run.stderr).toBe(0)
        expect(run.stdout).toContain(`+ gpu1  ${GPU1}  under cn`)
        expect(run.stdout.trimEnd()).toMatch(/Reshaped\.$/)
        for (const args of [[], ['--dry-run']]) {
          const again = await placemat(['reshape', plan, ...args, ...t])
          expect(again.code, again.stderr).toBe(0)
          expect(again.stdout.trim()).toBe('Already done: every move of the plan is in place. Nothing was changed.')
        }
        const inventories = async (name: string) => JSON.parse((await placemat(['inventory', 'list', name, '--json', ...t])).stdout)
        expect((await inventories('gpu0')).inventories).toMatchObject({VGPU: {total: 6}})
        expect((await inventories('gpu1')).inventories).toMatchObject({VGPU: {total: 2}})
      }
    } finally {
      await daemon.close()
    }
  })
})
