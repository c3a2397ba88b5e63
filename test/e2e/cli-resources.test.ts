/**
 * The resource commands on the real binary, against a daemon (--url, --token) and against
 * a SQLite file (--db), on the same scenario: each step runs on both transports at once and
 * must give the same exit code and the same --json output.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {startServer, type RunningServer} from '../../src/daemon/server.js'
import {placemat} from '../helpers/cli.js'
import {newDb} from '../helpers/endpoints.js'
const exec = (args: string[], input?: string) => placemat(args, {input})

const U = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
const CN = U(1)
const NUMA0 = U(2)
const NUMA1 = U(3)
const AGG1 = U(101)
const AGG2 = U(102)
const C1 = U(201)
const C2 = U(202)
const C3 = U(203)

let dir: string
let server: RunningServer
let daemonArgs: string[]
let fileArgs: string[]

/** Runs one command on both transports; both must agree. Returns the (daemon) result, JSON parsed when asked. */
async function both(args: string[], expectCode = 0, input?: string): Promise<{code: number; out: any; stdout: string; stderr: string}> {
  const [d, f] = await Promise.all([exec([...args, ...daemonArgs], input), exec([...args, ...fileArgs], input)])
  const ctx = `placemat ${args.join(' ')}\n--url stderr: ${d.stderr}\n--db stderr: ${f.stderr}`
  expect(d.code, ctx).toBe(expectCode)
  expect(f.code, ctx).toBe(expectCode)
  const json = args.includes('--json')
  if (expectCode === 0) {
    if (json) expect(JSON.parse(f.stdout), ctx).toEqual(JSON.parse(d.stdout))
    else expect(f.stdout, ctx).toBe(d.stdout)
  } else {
    // One line on stderr, the same on both transports.
    expect(d.stderr.trim().split('\n'), ctx).toHaveLength(1)
    expect(f.stderr, ctx).toBe(d.stderr)
  }
  return {code: d.code, out: json && d.stdout ? JSON.parse(d.stdout) : d.stdout, stdout: d.stdout, stderr: d.stderr}
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-cli-res-'))
  server = await startServer({db: path.join(dir, 'daemon.db'), host: '127.0.0.1', port: 0, auth: 'noauth2'})
  const file = path.join(dir, 'file.db')
  await newDb(file)
  daemonArgs = ['--url', server.url, '--token', 'admin']
  fileArgs = ['--db', file]
})

afterAll(async () => {
  await server?.close()
  if (dir) fs.rmSync(dir, {recursive: true, force: true})
})

describe('resource commands on a daemon and on a file', () => {
  it('creates providers, classes and inventories', async () => {
    const cn = await both(['provider', 'create', 'compute-1', '--uuid', CN, '--json'])
    expect(cn.out).toMatchObject({uuid: CN, name: 'compute-1', generation: 0, parent_provider_uuid: null, root_provider_uuid: CN})
    // parents by name and by uuid
    await both(['provider', 'create', 'numa0', '--parent', 'compute-1', '--uuid', NUMA0, '--json'])
    const n1 = await both(['provider', 'create', 'numa1', '--parent', CN, '--uuid', NUMA1, '--json'])
    expect(n1.out).toMatchObject({parent_provider_uuid: CN, root_provider_uuid: CN})

    const cls = await both(['class', 'create', 'CUSTOM_NET_BW', '--json'])
    expect(cls.out).toEqual({resource_classes: [{name: 'CUSTOM_NET_BW', created: true}]})

    const inv = await both([
      'inventory',
      'set',
      'compute-1',
      'VCPU=64',
      'MEMORY_MB=262144',
      '--allocation-ratio',
      'VCPU=4',
      '--reserved',
      'MEMORY_MB=512',
      '--json',
    ])
    expect(inv.out.inventories.VCPU).toMatchObject({total: 64, allocation_ratio: 4, reserved: 0})
    expect(inv.out.inventories.MEMORY_MB).toMatchObject({total: 262144, reserved: 512})
    // osc-placement's CLASS:field=VALUE form and a bare field value for every class named
    await both([
      'inventory',
      'set',
      'numa0',
      'VCPU=32',
      'CUSTOM_NET_BW=1000',
      'VCPU:step_size=2',
      '--max-unit',
      'VCPU=16',
      '--allocation-ratio',
      '1.5',
      '--json',
    ])
    // --amend keeps the other classes and fields
    const amended = await both(['inventory', 'set', 'compute-1', 'DISK_GB=1000', '--amend', '--step-size', 'DISK_GB=10', '--json'])
    expect(Object.keys(amended.out.inventories).sort()).toEqual(['DISK_GB', 'MEMORY_MB', 'VCPU'])
    expect(amended.out.inventories.VCPU.allocation_ratio).toBe(4)
    // without --amend, inventory is replaced: a class without a total is a usage error
    await both(['inventory', 'set', 'compute-1', '--reserved', 'VCPU=1'], 2)

    const list = await both(['inventory', 'list', 'numa0', '--json'])
    expect(list.out.inventories.VCPU).toMatchObject({total: 32, step_size: 2, max_unit: 16})
    expect(list.out.inventories.CUSTOM_NET_BW).toMatchObject({allocation_ratio: 1.5, max_unit: 2147483647})
    expect(list.out.usages).toEqual({VCPU: 0, CUSTOM_NET_BW: 0})
  })

  it('manages traits and aggregates with generations', async () => {
    const created = await both(['trait', 'create', 'CUSTOM_GOLD', 'CUSTOM_RAID', '--json'])
    expect(created.out.traits.map((t: any) => t.created)).toEqual([true, true])
    await both(['provider', 'trait', 'add', 'compute-1', 'HW_CPU_X86_AVX2', 'CUSTOM_GOLD', 'CUSTOM_RAID', '--json'])
    const removed = await both(['provider', 'trait', 'remove', 'compute-1', 'CUSTOM_RAID', '--json'])
    expect(removed.out.traits.sort()).toEqual(['CUSTOM_GOLD', 'HW_CPU_X86_AVX2'])
    await both(['provider', 'trait', 'set', 'numa0', 'CUSTOM_GOLD', '--json'])
    const assoc = await both(['trait', 'list', '--associated', '--name', 'startswith:CUSTOM_', '--json'])
    expect(assoc.out.traits).toEqual(['CUSTOM_GOLD'])
    await both(['trait', 'delete', 'CUSTOM_GOLD'], 4)

    await both(['aggregate', 'add', 'compute-1', AGG1, AGG2, '--json'])
    const aggs = await both(['aggregate', 'remove', 'compute-1', AGG1, '--json'])
    expect(aggs.out.aggregates).toEqual([AGG2])
    // an explicit stale generation is not retried
    await both(['aggregate', 'set', 'numa0', AGG1, '--generation', '99'], 4)
    const set = await both(['aggregate', 'set', 'numa0', AGG1, '--json'])
    expect(set.out.aggregates).toEqual([AGG1])
  })

  it('sets, posts and unsets allocations; reports usage and the tree', async () => {
    const a = await both([
      'allocation',
      'set',
      C1,
      '--allocation',
      `rp=compute-1,VCPU=2,MEMORY_MB=1024`,
      '--allocation',
      `rp=${NUMA0},CUSTOM_NET_BW=100`,
      '--project',
      'p1',
      '--user',
      'u1',
      '--consumer-type',
      'INSTANCE',
      '--json',
    ])
    expect(a.out).toMatchObject({project_id: 'p1', user_id: 'u1', consumer_type: 'INSTANCE', consumer_generation: 1})
    expect(a.out.allocations[CN].resources).toEqual({VCPU: 2, MEMORY_MB: 1024})
    // too much is a conflict
    await both(['allocation', 'set', C2, '--allocation', 'rp=compute-1,VCPU=9999', '--project', 'p1', '--user', 'u1'], 4)
    // --amend keeps the rest; generation and project come from the current consumer
    const amended = await both(['allocation', 'set', C1, '--amend', '--allocation', 'rp=compute-1,VCPU=4', '--json'])
    expect(amended.out.allocations[CN].resources).toEqual({VCPU: 4, MEMORY_MB: 1024})
    expect(amended.out.consumer_generation).toBe(2)

    const file = path.join(dir, 'post.yaml')
    // YAML, provider by name
    fs.writeFileSync(
      file,
      `${C3}:\n  allocations:\n    compute-1: {resources: {DISK_GB: 100}}\n  project_id: p1\n  user_id: u2\n  consumer_type: MIGRATION\n`,
    )
    const posted = await both(['allocation', 'post', file, '--json'])
    expect(posted.out).toEqual({consumers: [C3]})
    // JSON on stdin, generation and ownership filled in from the current consumer
    await both(['allocation', 'post', '-', '--json'], 0, JSON.stringify({[C3]: {allocations: {[CN]: {resources: {DISK_GB: 50}}}}}))
    const c3 = await both(['allocation', 'show', C3, '--json'])
    expect(c3.out).toMatchObject({project_id: 'p1', user_id: 'u2', consumer_type: 'MIGRATION', consumer_generation: 2})
    expect(c3.out.allocations[CN].resources).toEqual({DISK_GB: 50})
    // A consumer of no type shows consumer_type null (Placement's body says "unknown", which it
    // refuses when sent back): what `allocation show --json` prints can be posted again.
    const untyped = 'c4000000-0000-4000-8000-000000000004'
    await both(['allocation', 'set', untyped, '--allocation', 'rp=compute-1,VCPU=1', '--project', 'p1', '--user', 'u1'])
    const shown = await both(['allocation', 'show', untyped, '--json'])
    expect(shown.out.consumer_type).toBeNull()
    await both(['allocation', 'post', '-', '--json'], 0, JSON.stringify({[untyped]: shown.out}))
    await both(['allocation', 'delete', untyped])
    // provider show --allocations, for scripts: --ids gives the consumers, -c the allocation columns.
    const ids = await both(['provider', 'show', 'compute-1', '--allocations', '--ids'])
    expect(ids.stdout.trim().split('\n').sort()).toEqual([C1, C3].sort())
    const consumers = await both(['provider', 'show', 'compute-1', '--allocations', '-c', 'consumer', '-f', 'value'])
    expect(consumers.stdout.trim().split('\n').sort()).toEqual([C1, C3].sort())

    const unset = await both(['allocation', 'unset', C1, '--resource-class', 'MEMORY_MB', '--json'])
    expect(unset.out.allocations[CN].resources).toEqual({VCPU: 4})
    expect(unset.out.allocations[NUMA0].resources).toEqual({CUSTOM_NET_BW: 100})

    const usage = await both(['usage', 'show', 'compute-1', '--json'])
    expect(usage.out.usages).toEqual({VCPU: 4, MEMORY_MB: 0, DISK_GB: 50})
    const total = await both(['usage', 'total', '--project', 'p1', '--json'])
    expect(total.out.usages).toEqual({
      INSTANCE: {VCPU: 4, CUSTOM_NET_BW: 100, consumer_count: 1},
      MIGRATION: {DISK_GB: 50, consumer_count: 1},
    })

    const tree = await both(['provider', 'tree', 'numa1', '--json'])
    expect(tree.out.trees).toHaveLength(1)
    const root = tree.out.trees[0]
    expect(root).toMatchObject({uuid: CN, name: 'compute-1', usages: {VCPU: 4, MEMORY_MB: 0, DISK_GB: 50}})
    expect(root.children.map((c: any) => c.name)).toEqual(['numa0', 'numa1'])
    expect(root.children[0].usages).toEqual({VCPU: 0, CUSTOM_NET_BW: 100})
    // the table draws the tree
    const drawn = await both(['provider', 'tree', 'compute-1', '-c', 'tree,resource_class,used,capacity'])
    expect(drawn.stdout.split('\n').map((l) => l.trimEnd())).toEqual([
      'PROVIDER   CLASS          USED  CAPACITY',
      'compute-1  VCPU              4       256',
      '│          MEMORY_MB         0    261632',
      '│          DISK_GB          50      1000',
      '├─ numa0   VCPU              0        48',
      '│          CUSTOM_NET_BW   100      1500',
      '└─ numa1',
      '',
    ])
  })

  it('maps not found and conflicts to exit codes 3 and 4; cleans up', async () => {
    await both(['provider', 'show', 'nosuch'], 3)
    await both(['provider', 'delete', 'compute-1'], 4) // it has children
    await both(['inventory', 'delete', 'compute-1', 'VCPU'], 4) // in use
    await both(['allocation', 'delete', C1, C3])
    await both(['allocation', 'delete', C3], 3)
    await both(['inventory', 'delete', 'compute-1', 'VCPU', 'DISK_GB'])
    const moved = await both(['provider', 'set', 'numa1', '--name', 'numa-1', '--no-parent', '--json'])
    expect(moved.out).toMatchObject({name: 'numa-1', parent_provider_uuid: null, root_provider_uuid: NUMA1})
    await both(['provider', 'delete', 'numa0', 'numa-1', 'compute-1'])
    const none = await both(['provider', 'list', '--json'])
    expect(none.out.resource_providers).toEqual([])
  })

  it('retries a read-modify-write that loses a race (409 concurrent_update)', async () => {
    await exec(['provider', 'create', 'racer', '--uuid', U(50), ...daemonArgs])
    const traits = ['HW_CPU_X86_AVX', 'HW_CPU_X86_AVX2', 'HW_CPU_X86_SSE42', 'HW_CPU_X86_SSE41']
    const results = await Promise.all(traits.map((t) => exec(['provider', 'trait', 'add', 'racer', t, ...daemonArgs])))
    for (const r of results) expect(r.code, r.stderr).toBe(0)
    const final = await exec(['provider', 'trait', 'list', 'racer', '--json', ...daemonArgs])
    expect(JSON.parse(final.stdout).traits.sort()).toEqual([...traits].sort())
  })
})

describe('generation handling in the CLI services', () => {
  it('re-reads and re-applies a change after a 409 concurrent_update, and gives up on other conflicts', async () => {
    const {PlacementClient} = await import('../../src/client/client.js')
    const {updateProviderSet} = await import('../../src/cli/services/sets.js')
    let generation = 5
    let traits = ['A']
    let racePending = true
    const puts: any[] = []
    const transport = {
      description: 'fake',
      async close() {},
      async send(method: string, _path: string, _h: Record<string, string>, body?: string) {
        if (method === 'GET') return {status: 200, headers: {}, body: {traits, resource_provider_generation: generation}}
        const data = JSON.parse(body!)
        puts.push(data)
        if (racePending) {
          // another writer got there first
          racePending = false
          traits = [...traits, 'B']
          generation++
        }
        if (data.resource_provider_generation !== generation) {
          return {status: 409, headers: {}, body: {errors: [{detail: 'generation changed', code: 'placement.concurrent_update'}]}}
        }
        traits = data.traits
        generation++
        return {status: 200, headers: {}, body: {traits, resource_provider_generation: generation}}
      },
    }
    const client = new PlacementClient(transport)
    const out = await updateProviderSet(client, 'rp', 'traits', (cur) => [...cur, 'C'])
    expect(puts.map((p) => p.resource_provider_generation)).toEqual([5, 6])
    expect(out.traits).toEqual(['A', 'B', 'C'])
    // nothing to change: no write
    await updateProviderSet(client, 'rp', 'traits', (cur) => cur)
    expect(puts).toHaveLength(2)
    // any other conflict is not retried
    const {ApiError} = await import('../../src/client/client.js')
    const {retryOnConcurrentUpdate} = await import('../../src/cli/backend/retry.js')
    let calls = 0
    const inUse = new ApiError(409, 'in use', 'placement.inventory.inuse', 'PUT', '/x')
    await expect(
      retryOnConcurrentUpdate(async () => {
        calls++
        throw inUse
      }),
    ).rejects.toBe(inUse)
    expect(calls).toBe(1)
  })
})
