/**
 * kill -9 in the middle of an offline reshape leaves the file exactly as it was: a child
 * process runs a large offline reshape (a new child provider and 1500 consumers' allocations
 * in one transaction), is told by PLACEMAT_TEST_PAUSE_IN_TX to wait after writing its rows
 * and before COMMIT, and is killed with SIGKILL there. Every row of the file is compared
 * with a dump taken before. Then the same reshape runs to the end, to show it does change
 * the file.
 */
import {spawn} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, expect, it} from 'vitest'
import type {Consumer} from '../../src/core/state/state.js'
import {createProvider} from '../../src/core/placement/providers.js'
import {Store} from '../../src/store/store.js'
import {BIN, ROOT, childEnv, dumpDb, placemat} from '../helpers/db-tools.js'

const CONSUMERS = 1500
const CN = '0e0e0e0e-0000-4000-8000-000000000001'
const GPU = '0e0e0e0e-0000-4000-8000-000000000002'
const consumer = (i: number) => `0c0c0c0c-0000-4000-8000-${String(i).padStart(12, '0')}`

let dir: string
let file: string
let plan: string

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-kill-'))
  file = path.join(dir, 'big.db')
  plan = path.join(dir, 'plan.yaml')
  fs.writeFileSync(plan, `moves:\n  - {from: big-cn, to: big-cn_gpu, uuid: ${GPU}, resources: {VGPU: all}}\n`)
  const store = await Store.open(file)
  await store.write((s, now) => {
    const p = createProvider(s, now, {uuid: CN, name: 'big-cn'})
    s.setInventory(p, 'VCPU', {total: 100000, reserved: 0, min_unit: 1, max_unit: 100, step_size: 1, allocation_ratio: 1})
    s.setInventory(p, 'VGPU', {total: 2 * CONSUMERS, reserved: 0, min_unit: 1, max_unit: 2, step_size: 1, allocation_ratio: 1})
    s.bumpProvider(p, now)
    for (let i = 0; i < CONSUMERS; i++) {
      const c: Consumer = {
        uuid: consumer(i),
        project: 'f0000000-0000-4000-8000-000000000001',
        user: 'e0000000-0000-4000-8000-000000000001',
        type: 'INSTANCE',
        generation: 1,
        createdAt: now,
        updatedAt: now,
        allocations: new Map(),
      }
      s.addConsumer(c)
      s.setAllocations(
        c,
        new Map([
          [
            CN,
            new Map([
              ['VCPU', 1],
              ['VGPU', 2],
            ]),
          ],
        ]),
      )
    }
  })
  await store.close()
})

afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

/** Starts the offline reshape, paused before COMMIT; resolves once it says it is paused. */
function startPaused(): Promise<{pid: number; done: Promise<{code: number | null; signal: string | null}>}> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'reshape', plan, '--db', file], {
      cwd: ROOT,
      env: childEnv({PLACEMAT_TEST_PAUSE_IN_TX: '120000'}),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const done = new Promise<{code: number | null; signal: string | null}>((r) => child.on('exit', (code, signal) => r({code, signal})))
    let err = ''
    child.stdout!.resume()
    child.stderr!.on('data', (d) => {
      err += d
      if (err.includes('placemat-test: paused in transaction')) resolve({pid: child.pid!, done})
    })
    done.then((r) => reject(new Error(`the reshape ended before pausing (${JSON.stringify(r)}): ${err}`)))
  })
}

it('SIGKILL in the middle of an offline reshape leaves the file exactly as before', async () => {
  const before = dumpDb(file)
  const {pid, done} = await startPaused()
  // The rows are written (inside the open transaction) and COMMIT has not run.
  process.kill(pid, 'SIGKILL')
  expect(await done).toEqual({code: null, signal: 'SIGKILL'})
  expect(dumpDb(file)).toBe(before)

  const status = await placemat(['db', 'status', '--db', file, '--json'])
  expect(status.code, status.stderr).toBe(0)
  expect(JSON.parse(status.stdout)).toMatchObject({integrity_ok: true, state: 'current'})

  // Without the pause the same reshape goes through and changes the file.
  const r = await placemat(['reshape', plan, '--db', file, '--json'])
  expect(r.code, r.stderr).toBe(0)
  expect(JSON.parse(r.stdout)).toMatchObject({applied: true, transaction: 'offline'})
  expect(dumpDb(file)).not.toBe(before)
  const ex = await placemat(['export', '--db', file, '--json'])
  const snap = JSON.parse(ex.stdout)
  expect(snap.providers.find((p: any) => p.uuid === GPU).inventories.VGPU.total).toBe(2 * CONSUMERS)
  expect(snap.consumers.every((c: any) => c.allocations[GPU]?.VGPU === 2 && c.allocations[CN].VGPU === undefined)).toBe(true)
}, 120000)
