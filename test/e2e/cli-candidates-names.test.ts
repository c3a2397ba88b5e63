/**
 * `placemat candidates` names only the providers it prints: the providers of the rows shown
 * (and their roots, for the rack) are looked up, by the hundred on placemat and one by one on
 * plain Placement, never the whole provider list; the table is the same wherever it is read from.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {PlacementClient} from '../../src/client/client.js'
import {HttpTransport} from '../../src/client/transports.js'
import {startServer, type RunningServer} from '../../src/daemon/server.js'
import {plainProxy, proxyTo, seed, U, type HostSpec} from '../helpers/claim-cloud.js'
import {placemat} from '../helpers/cli.js'

// 40 hosts, each with a NIC child: 80 providers, in racks of ten.
const HOSTS: HostSpec[] = Array.from({length: 40}, (_, k) => ({
  name: `h${k + 1}`,
  uuid: U(k + 1),
  nic: {name: `h${k + 1}-nic`, uuid: U(100 + k + 1), vfs: 2},
}))
const LAYOUT = {racks: [0, 1, 2, 3].map((r) => ({name: `k${r + 1}`, hosts: HOSTS.slice(r * 10, r * 10 + 10).map((h) => h.name)}))}

let dir: string
let server: RunningServer
const seen: {plain: string[]; placemat: string[]} = {plain: [], placemat: []}
let plain: {url: string; close(): Promise<void>}
let mine: {url: string; close(): Promise<void>}
let layoutFile: string

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-cli-names-'))
  server = await startServer({db: path.join(dir, 'daemon.db'), host: '127.0.0.1', port: 0, auth: 'noauth2'})
  await seed(new PlacementClient(new HttpTransport(server.url, 'admin')), HOSTS, LAYOUT)
  plain = await plainProxy(server.url, seen.plain)
  mine = await proxyTo(server.url, {seen: seen.placemat})
  layoutFile = path.join(dir, 'layout.json')
  fs.writeFileSync(layoutFile, JSON.stringify(LAYOUT))
})

afterAll(async () => {
  await plain?.close()
  await mine?.close()
  await server?.close()
  fs.rmSync(dir, {recursive: true, force: true})
})

/** The command through both proxies (plain Placement with --layout), with the requests each made. */
async function both(args: string[]) {
  seen.plain.length = 0
  seen.placemat.length = 0
  const [p, m] = await Promise.all([
    placemat([...args, '--url', plain.url, '--token', 'admin', '--layout', layoutFile]),
    placemat([...args, '--url', mine.url, '--token', 'admin']),
  ])
  expect(p.code, p.stderr).toBe(0)
  expect(m.code, m.stderr).toBe(0)
  expect(p.stdout).toBe(m.stdout)
  return {stdout: m.stdout, requests: {plain: [...seen.plain], placemat: [...seen.placemat]}}
}

/** Requests for every provider. */
const listings = (requests: string[]) =>
  requests.filter((r) => /^GET \/resource_providers(\?|$)/.test(r) || /^GET \/placemat\/v1\/providers(\?(?!uuid=)|$)/.test(r))
/** The providers looked up, one by one or several at a time. */
const lookups = (requests: string[]) =>
  requests.flatMap((r) => {
    const one = /^GET \/resource_providers\/([0-9a-f-]{36})$/.exec(r)
    if (one) return [one[1]]
    const several = /^GET \/placemat\/v1\/providers\?uuid=(.*)$/.exec(r)
    return several ? decodeURIComponent(several[1]).split(',') : []
  })

describe('candidates table names', () => {
  it('looks up the providers of the rows printed, not all 80', async () => {
    const r = await both(['candidates', '--resources', 'VCPU:1', '--limit', '3'])
    const lines = r.stdout.trim().split('\n')
    expect(lines[0]).toMatch(/^#\s+PROVIDERS\s+RESOURCES\s+LEFT AFTER\s+RACK$/)
    expect(lines.slice(1).map((l) => l.split(/\s+/).slice(0, 2).concat(l.split(/\s+/).at(-1)!))).toEqual([
      ['1', 'h1', 'k1'],
      ['2', 'h2', 'k1'],
      ['3', 'h3', 'k1'],
    ])
    expect(lines[1]).toContain('h1: VCPU=1')
    expect(lines[1]).toContain('h1: VCPU=7')
    for (const requests of [r.requests.plain, r.requests.placemat]) {
      expect(listings(requests)).toEqual([])
      expect(lookups(requests)).toHaveLength(3)
    }
  })

  it('a child printed alone: it and its root are looked up, for the name and the rack', async () => {
    const r = await both(['candidates', '--group', '_N:resources=SRIOV_NET_VF:1', '--limit', '2', '-c', 'providers,rack'])
    expect(
      r.stdout
        .trim()
        .split('\n')
        .slice(1)
        .map((l) => l.trim().split(/\s+/)),
    ).toEqual([
      ['h1-nic', 'k1'],
      ['h2-nic', 'k1'],
    ])
    for (const requests of [r.requests.plain, r.requests.placemat]) {
      expect(listings(requests)).toEqual([])
      expect(lookups(requests).sort()).toEqual([U(1), U(2), U(101), U(102)].sort())
    }
  })

  it('every candidate printed: the same table as the daemon gives directly', async () => {
    const r = await both(['candidates', '--resources', 'VCPU:1,MEMORY_MB:64', '-c', 'index,providers,free_after,rack'])
    expect(r.stdout.trim().split('\n')).toHaveLength(41)
    const direct = await placemat([
      'candidates',
      '--resources',
      'VCPU:1,MEMORY_MB:64',
      '-c',
      'index,providers,free_after,rack',
      '--url',
      server.url,
      '--token',
      'admin',
    ])
    expect(direct.stdout).toBe(r.stdout)
    expect(r.stdout).toMatch(/\n\s*40\s+h40\s+h40: VCPU=7,MEMORY_MB=16320\s+k4\n$/)
    expect(lookups(r.requests.plain)).toHaveLength(40)
    expect(lookups(r.requests.placemat)).toHaveLength(40)
    expect(r.requests.placemat.filter((q) => q.startsWith('GET /placemat/v1/providers?'))).toHaveLength(1)
  })

  it('--json and --ids look nothing up', async () => {
    const j = await both(['candidates', '--resources', 'VCPU:1', '--limit', '3', '--json'])
    expect(JSON.parse(j.stdout).allocation_requests).toHaveLength(3)
    const ids = await both(['candidates', '--resources', 'VCPU:1', '--limit', '3', '--ids'])
    expect(ids.stdout.trim().split('\n')).toEqual([U(1), U(2), U(3)])
    for (const r of [j, ids])
      for (const requests of [r.requests.plain, r.requests.placemat]) expect([...listings(requests), ...lookups(requests)]).toEqual([])
  })
})
