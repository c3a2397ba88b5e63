/**
 * POST /placemat/v1/make-room on the real daemon: the plan is worked out beside the event loop
 * (http/plan-aside.ts, a worker thread on the State's image), so requests sent while a plan of
 * seconds runs are answered before it; and the worker's plan is the one the command line makes
 * of the same cloud (`placemat make-room --json`, planned on a copy read over the API).
 *
 * The cloud: 800 flat hosts of 64 VCPU, 256 GiB and 2 TB, each holding 12 instances of mixed
 * sizes, written in one POST /allocations.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import YAML from 'yaml'
import {placemat} from '../helpers/cli.js'
import {startForeground, type ForegroundDaemon} from '../helpers/foreground-daemon.js'

const HOSTS = 800
const PER_HOST = 12
const SIZES: Array<[number, number, number]> = [
  [2, 4096, 20],
  [4, 8192, 40],
  [4, 16384, 40],
  [8, 32768, 80],
]
const X = {name: 'x1.large', vcpus: 16, ram: 65536, disk: 160}
const H = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
const C = (n: number) => `cccccccc-0000-4000-8000-${String(n).padStart(12, '0')}`

let dir: string
let d: ForegroundDaemon
const call = async (method: string, url: string, body?: unknown) => {
  const r = await fetch(`${d.url}${url}`, {
    method,
    headers: {'x-auth-token': 'admin', 'openstack-api-version': 'placement latest', 'content-type': 'application/json'},
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await r.text()
  return {status: r.status, body: text ? JSON.parse(text) : undefined}
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-make-room-daemon-'))
  const providers = Array.from({length: HOSTS}, (_, i) => ({
    name: `cn-${i}`,
    uuid: H(i),
    inventories: {VCPU: 64, MEMORY_MB: 262144, DISK_GB: 2000},
  }))
  fs.writeFileSync(path.join(dir, 'cloud.yaml'), YAML.stringify({providers}))
  d = await startForeground(['--db', path.join(dir, 'p.db'), '--auth', 'noauth2', '--no-warm-up'])
  const apply = await placemat(['apply', path.join(dir, 'cloud.yaml'), '--url', d.url, '--token', 'admin'])
  expect(apply.code, apply.stderr).toBe(0)
  const allocations: Record<string, unknown> = {}
  let c = 0
  for (let h = 0; h < HOSTS; h++)
    for (let k = 0; k < PER_HOST; k++) {
      const [vcpu, ram, disk] = SIZES[(h * 7 + k * 3) % SIZES.length]
      allocations[C(++c)] = {
        allocations: {[H(h)]: {resources: {VCPU: vcpu, MEMORY_MB: ram, DISK_GB: disk}}},
        project_id: 'p',
        user_id: 'u',
        consumer_generation: null,
        consumer_type: 'INSTANCE',
      }
    }
  expect((await call('POST', '/allocations', allocations)).status).toBe(204)
}, 180_000)

afterAll(async () => {
  await d?.stop()
  fs.rmSync(dir, {recursive: true, force: true})
})

describe('POST /placemat/v1/make-room on the daemon', () => {
  it('plans beside the event loop: requests sent while a plan runs are answered before it', async () => {
    const now = (await call('POST', '/placemat/v1/make-room', {flavor: X, count: 0})).body.fit_before
    const order: string[] = []
    const planned = call('POST', '/placemat/v1/make-room', {flavor: X, count: now + 120}).then((r) => {
      order.push('plan')
      return r
    })
    // Reads and a claim while the plan runs: each is served as the plan goes on.
    for (let k = 0; k < 5; k++) {
      expect((await call('GET', `/resource_providers/${H(k)}/usages`)).status).toBe(200)
      order.push('read')
    }
    const claim = {
      allocations: {[H(0)]: {resources: {VCPU: 1}}},
      project_id: 'p',
      user_id: 'u',
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    }
    expect((await call('PUT', `/allocations/${C(999999)}`, claim)).status).toBe(204)
    order.push('claim')
    const plan = await planned
    expect(plan.status).toBe(200)
    expect(plan.body).toMatchObject({possible: true})
    expect(plan.body.moves.length).toBeGreaterThan(0)
    // A plan of about two seconds of CPU (on this cloud): had it been made on the event loop, the
    // reads and the claim after the first would have waited for it.
    expect(order).toEqual(['read', 'read', 'read', 'read', 'read', 'claim', 'plan'])
  })

  it('is the plan the command line makes of the same cloud', async () => {
    fs.writeFileSync(path.join(dir, 'flavors.yaml'), YAML.stringify([X]))
    const asked = {flavor: X, count: 40, in: 'host:cn-3'}
    const api = (await call('POST', '/placemat/v1/make-room', asked)).body
    const cli = await placemat([
      'make-room',
      '--flavors',
      path.join(dir, 'flavors.yaml'),
      '--flavor',
      X.name,
      '--count',
      '3',
      '--in',
      'host:cn-3',
      '--url',
      d.url,
      '--token',
      'admin',
      '--json',
    ])
    expect(cli.code, cli.stderr).toBe(0)
    const api3 = (await call('POST', '/placemat/v1/make-room', {...asked, count: 3})).body
    const mine = JSON.parse(cli.stdout)
    const same = (r: {fit_before: number; fit_after: number; lower_bound: number | null; moves: unknown[]}) => ({
      fit_before: r.fit_before,
      fit_after: r.fit_after,
      lower_bound: r.lower_bound,
      moves: r.moves,
    })
    expect(same(mine)).toEqual(same(api3))
    expect(api).toMatchObject({possible: false})
  })
})
