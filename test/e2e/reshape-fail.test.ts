/**
 * Failing reshapes change nothing: stale provider or consumer generation, overcommit,
 * unknown provider, inventory in use. On the real binary, offline (the file's dump is
 * the same after) and online (the export is the same after, no provider left behind),
 * with the same exit code and one line on stderr. Then, in process, the online clean-up
 * of created providers and the re-plan on a concurrent update.
 */
import fs from 'node:fs'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {PlacementClient, type ApiResponse, type Transport} from '../../src/client/client.js'
import {HttpTransport} from '../../src/client/transports.js'
import {runReshape} from '../../src/cli/services/reshape.js'
import {startServer, type RunningServer} from '../../src/daemon/server.js'
import {VGPU_PLAN, dumpDb, placemat, setupVgpu, startVgpu} from '../helpers/db-tools.js'
import {CN, VM_A, VM_B} from '../helpers/vgpu-fixture.js'
import {chooseBackend} from '../../src/cli/backend/choose.js'
import {parsePlan} from '../../src/cli/formats/reshape-plan.js'

const MISSING = '0d0d0d0d-0000-4000-8000-0000000000ff'
const PLAN = VGPU_PLAN

let vgpu: Awaited<ReturnType<typeof startVgpu>>
let dir: string
let file: string
let online: string[]
let offline: string[]
const setup = setupVgpu

beforeAll(async () => {
  vgpu = await startVgpu('placemat-reshape-fail-')
  ;({dir, file, online, offline} = vgpu)
})

afterAll(() => vgpu?.close())

const write = (name: string, plan: unknown) => {
  const p = path.join(dir, name)
  fs.writeFileSync(p, typeof plan === 'string' ? plan : JSON.stringify(plan, null, 2))
  return p
}

const cnInventory = {VCPU: {total: 32, allocation_ratio: 4}, MEMORY_MB: {total: 65536, reserved: 512}, VGPU: {total: 8, max_unit: 4}}

// pgpu0 gets 3 VGPU (max_unit 4, so the amount is allowed and only the capacity is short).
const OVERCOMMIT = `moves:
  - {from: compute-vgpu-1, to: compute-vgpu-1_pgpu0, uuid: 0d0d0d0d-0000-4000-8000-0000000000b0, resources: "VGPU:3",
     inventory: {VGPU: {max_unit: 4}}, consumers: [${VM_B}]}
  - {from: compute-vgpu-1, to: compute-vgpu-1_pgpu1, uuid: 0d0d0d0d-0000-4000-8000-0000000000b1, resources: "VGPU:5", consumers: [${VM_A}]}
`

const cases: {name: string; plan: unknown; code: number; stderr: RegExp}[] = [
  {
    name: 'a stale provider generation',
    plan: {inventories: {[CN]: {resource_provider_generation: 1, inventories: cnInventory}}, allocations: {}},
    code: 4,
    stderr:
      /^placemat: 409 \[placement\.concurrent_update\]: (the reshape would fail: )?resource provider generation conflict for provider 0d0d0d0d-0000-4000-8000-000000000001: actual: 3, given: 1\n$/,
  },
  {
    name: 'a stale consumer generation',
    plan: {
      inventories: {[CN]: {inventories: cnInventory}},
      allocations: {
        [VM_A]: {
          allocations: {[CN]: {resources: {VCPU: 4, MEMORY_MB: 8192, VGPU: 2}}},
          project_id: 'f0f0f0f0-0000-4000-8000-000000000001',
          user_id: 'e0e0e0e0-0000-4000-8000-000000000001',
          consumer_generation: 7,
        },
      },
    },
    code: 4,
    stderr: /409 \[placement\.concurrent_update\]: (the reshape would fail: )?consumer generation conflict - expected 1 but got 7/,
  },
  {
    name: 'an overcommit (VM B needs 4 VGPU, its GPU would have 3)',
    plan: OVERCOMMIT,
    code: 4,
    stderr:
      /409: (the reshape would fail: )?Unable to allocate inventory: Unable to create allocation for 'VGPU' on resource provider '0d0d0d0d-0000-4000-8000-0000000000b0'\. The requested amount would exceed the capacity\./,
  },
  {
    name: 'an unknown provider',
    plan: {
      inventories: {[CN]: {inventories: cnInventory}, [MISSING]: {resource_provider_generation: 0, inventories: {VGPU: {total: 1}}}},
      allocations: {},
    },
    code: 6,
    stderr:
      /400 \[placement\.resource_provider\.not_found\]: (the reshape would fail: )?Resource provider 0d0d0d0d-0000-4000-8000-0000000000ff in inventories not found/,
  },
  {
    name: 'dropping inventory that has allocations',
    plan: {inventories: {[CN]: {inventories: {VCPU: cnInventory.VCPU, MEMORY_MB: cnInventory.MEMORY_MB}}}, allocations: {}},
    code: 4,
    stderr:
      /409 \[placement\.inventory\.inuse\]: (the reshape would fail: )?update conflict: Inventory for 'VGPU' on resource provider '0d0d0d0d-0000-4000-8000-000000000001' in use\./,
  },
  {
    name: 'a move from a provider that does not exist (3, as for any missing provider)',
    plan: 'moves: [{from: nowhere, to: somewhere, resources: {VGPU: 1}}]\n',
    code: 3,
    stderr: /plan: moves\[0\]: no provider nowhere/,
  },
]

describe('a failing reshape changes nothing', () => {
  for (const [i, c] of cases.entries()) {
    it(c.name, async () => {
      const plan = write(`plan-${i}.${typeof c.plan === 'string' ? 'yaml' : 'json'}`, c.plan)
      const dump = dumpDb(file)
      const exported = (await placemat(['export', ...online])).stdout
      for (const extra of [[], ['--dry-run']]) {
        const [d, f] = await Promise.all([
          placemat(['reshape', plan, ...extra, ...online]),
          placemat(['reshape', plan, ...extra, ...offline]),
        ])
        for (const r of [d, f]) {
          expect(r.code, r.stderr).toBe(c.code)
          expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1)
          expect(r.stderr).toMatch(c.stderr)
        }
        expect(f.stderr).toBe(d.stderr)
        expect(dumpDb(file)).toBe(dump)
        expect((await placemat(['export', ...online])).stdout).toBe(exported)
      }
    })
  }

  it('--dry-run lists every conflict it finds', async () => {
    const plan = write('over.yaml', OVERCOMMIT)
    const r = await placemat(['reshape', plan, '--dry-run', '--json', ...offline])
    expect(r.code).toBe(4)
    const report = JSON.parse(r.stdout)
    expect(report.after).toBeNull()
    expect(report.conflicts).toEqual([
      {kind: 'capacity', message: 'VGPU on compute-vgpu-1_pgpu0: 4 allocated, capacity would be 3'},
      {
        kind: 'capacity',
        message:
          "Unable to allocate inventory: Unable to create allocation for 'VGPU' on resource provider " +
          "'0d0d0d0d-0000-4000-8000-0000000000b0'. The requested amount would exceed the capacity.",
      },
    ])
    const text = await placemat(['reshape', plan, '--dry-run', ...offline])
    expect(text.stdout).toContain('(the reshape would fail; nothing would change)')
    expect(text.stdout).toMatch(/Conflicts:\n {2}capacity: VGPU on compute-vgpu-1_pgpu0: 4 allocated, capacity would be 3\n/)
  })
})

/**
 * Plain Placement in front of a daemon (no /placemat/ API, so the reshape goes in two steps),
 * answering POST /reshaper itself for the first `times` calls. It asks as noauth2's admin with
 * the service role too: with new defaults enforced (the default) POST /reshaper is the
 * service role's alone.
 */
class FailingReshaper implements Transport {
  calls = 0
  readonly description: string
  constructor(
    private readonly inner: Transport,
    private readonly answer: {status: number; code: string; detail: string},
    private readonly times: number,
  ) {
    this.description = inner.description
  }
  async send(method: string, p: string, headers: Record<string, string>, body?: string): Promise<ApiResponse> {
    if (p.startsWith('/placemat/')) {
      return {
        status: 404,
        headers: {'content-type': 'application/json'},
        body: {errors: [{status: 404, code: 'placement.undefined_code', detail: 'The resource could not be found.', title: 'Not Found'}]},
      }
    }
    if (method === 'POST' && p === '/reshaper' && this.calls++ < this.times) {
      const {status, code, detail} = this.answer
      return {status, headers: {'content-type': 'application/json'}, body: {errors: [{status, code, detail, title: 'Conflict'}]}}
    }
    return this.inner.send(method, p, {...headers, 'x-roles': 'admin,service'}, body)
  }
  close() {
    return this.inner.close()
  }
}

describe('online, in process', () => {
  let other: RunningServer
  beforeAll(async () => {
    other = await startServer({db: path.join(dir, 'other.db'), host: '127.0.0.1', port: 0, auth: 'noauth2'})
    await setup(['--url', other.url, '--token', 'admin'])
  })
  afterAll(() => other?.close())

  const plan = () => parsePlan(fs.readFileSync(PLAN, 'utf8'), PLAN)
  const names = async (client: PlacementClient) =>
    (await client.get('/resource_providers')).resource_providers.map((p: any) => p.name).sort()

  it('a reshape the server refuses takes back the providers it created', async () => {
    const t = new FailingReshaper(
      new HttpTransport(other.url, 'admin'),
      {status: 409, code: 'placement.undefined_code', detail: 'refused'},
      1,
    )
    const client = new PlacementClient(t)
    await expect(runReshape(await chooseBackend(client, {local: false}), plan(), {dryRun: false})).rejects.toMatchObject({
      status: 409,
      detail: 'refused',
    })
    expect(t.calls).toBe(1)
    expect(await names(client)).toEqual(['compute-vgpu-1'])
  })

  it('on a placemat daemon the new providers and the reshape are one transaction', async () => {
    const db = await startServer({db: path.join(dir, 'atomic.db'), host: '127.0.0.1', port: 0, auth: 'noauth2'})
    try {
      await setup(['--url', db.url, '--token', 'admin'])
      // The first batch carries stale provider generations: the daemon refuses all of it.
      let batches = 0
      const inner = new HttpTransport(db.url, 'admin')
      const client = new PlacementClient({
        description: inner.description,
        close: () => inner.close(),
        send(method: string, p: string, headers: Record<string, string>, body?: string) {
          if (p === '/placemat/v1/batch' && batches++ === 0) {
            const doc = JSON.parse(body!)
            for (const o of doc.operations)
              if (o.op === 'reshape') for (const inv of Object.values<any>(o.inventories)) inv.resource_provider_generation += 100
            body = JSON.stringify(doc)
          }
          return inner.send(method, p, headers, body)
        },
      })
      const report = await runReshape(await chooseBackend(client, {local: false}), plan(), {dryRun: false})
      expect(report).toMatchObject({applied: true, atomic: true, attempts: 2})
      // Nothing of the refused attempt stayed: the second one still had both children to create.
      expect(report.creates.map((c) => c.name).sort()).toEqual(['compute-vgpu-1_pgpu0', 'compute-vgpu-1_pgpu1'])
      expect(await names(client)).toEqual(['compute-vgpu-1', 'compute-vgpu-1_pgpu0', 'compute-vgpu-1_pgpu1'])
    } finally {
      await db.close()
    }
  })

  it('a concurrent update re-reads and re-plans, reusing the providers already created', async () => {
    const t = new FailingReshaper(
      new HttpTransport(other.url, 'admin'),
      {status: 409, code: 'placement.concurrent_update', detail: 'resource provider generation conflict'},
      2,
    )
    const client = new PlacementClient(t)
    const report = await runReshape(await chooseBackend(client, {local: false}), plan(), {dryRun: false})
    expect(report.applied).toBe(true)
    expect(report.attempts).toBe(3)
    expect(report.creates).toEqual([]) // created on the first attempt, found by name after
    expect(await names(client)).toEqual(['compute-vgpu-1', 'compute-vgpu-1_pgpu0', 'compute-vgpu-1_pgpu1'])
    const a = await client.get(`/allocations/${VM_A}`)
    expect(Object.keys(a.allocations).sort()).toEqual([CN, '0d0d0d0d-0000-4000-8000-0000000000a0'])
  })
})
