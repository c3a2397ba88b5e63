/**
 * Racing claims into one anti-affinity group never commit a breach: two placemat servers in
 * two processes on one database file, and the command line (a third process, on the file),
 * claim members onto hosts of the same rack at the same moment, round after round. Each
 * round exactly one wins; the group's rule holds at the end.
 */
import {spawn, type ChildProcess} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {PlacementClient} from '../../src/client/client.js'
import {HttpTransport} from '../../src/client/transports.js'
import {ROOT, placemat} from '../helpers/cli.js'

const ROUNDS = 48
const H = (r: number, n: number) => `33333333-0000-4000-8000-${String(r * 10 + n).padStart(12, '0')}`
const C = (r: number, who: number) => `44444444-0000-4000-8000-${String(r * 10 + who).padStart(12, '0')}`

function serverOn(file: string): Promise<{url: string; child: ChildProcess}> {
  const child = spawn(process.execPath, [path.join(ROOT, 'test', 'helpers', 'server-process.mjs'), file], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  return new Promise((resolve, reject) => {
    readline.createInterface({input: child.stdout!}).once('line', (url) => resolve({url, child}))
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)))
  })
}

describe('racing claims into one anti-affinity group', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-group-race-'))
  const db = path.join(dir, 'race.db')
  let servers: Array<{url: string; child: ChildProcess}> = []
  let clients: PlacementClient[] = []

  beforeAll(async () => {
    // One rack per round, two hosts in each.
    const hosts = Array.from({length: ROUNDS}, (_, r) => [1, 2].map((n) => ({uuid: H(r, n), name: `cn-${r}-${n}`}))).flat()
    fs.writeFileSync(
      path.join(dir, 'cloud.json'),
      JSON.stringify({providers: hosts.map((h) => ({name: h.name, uuid: h.uuid, inventories: {VCPU: 8}}))}),
    )
    const racks = Array.from({length: ROUNDS}, (_, r) => ({name: `rack-${r}`, hosts: [`cn-${r}-1`, `cn-${r}-2`]}))
    fs.writeFileSync(path.join(dir, 'layout.json'), JSON.stringify({racks}))
    for (const args of [
      ['db', 'init', '--db', db],
      ['apply', path.join(dir, 'cloud.json'), '--db', db],
      ['topology', 'apply', path.join(dir, 'layout.json'), '--db', db],
      ['group', 'create', 'solo', '--policy', 'anti-affinity', '--level', 'rack', '--db', db],
    ]) {
      const r = await placemat(args)
      expect(r.code, r.stderr).toBe(0)
    }
    servers = await Promise.all([serverOn(db), serverOn(db)])
    clients = servers.map((s) => new PlacementClient(new HttpTransport(s.url, 'admin'), 'latest'))
  }, 60_000)

  afterAll(async () => {
    for (const s of servers) s.child.stdin!.end()
    await Promise.all(servers.map((s) => new Promise((r) => (s.child.exitCode !== null ? r(null) : s.child.once('exit', r)))))
    fs.rmSync(dir, {recursive: true, force: true})
  })

  it(`${ROUNDS} rounds: one winner a round, never two members in a rack`, async () => {
    const claimOn = (client: PlacementClient, consumer: string, host: string) =>
      client
        .request('POST', '/placemat/v1/claims', {
          body: {
            consumer_uuid: consumer,
            project_id: 'p',
            user_id: 'u',
            consumer_generation: null,
            allocations: {[host]: {resources: {VCPU: 1}}},
            group: 'solo',
          },
        })
        .then(
          () => 'won',
          (err) => (err.code === 'placemat.affinity_violation' ? 'refused' : `error: ${err.message}`),
        )
    const outcomes: string[][] = []
    for (let r = 0; r < ROUNDS; r++) {
      const racers: Array<Promise<string>> = []
      // Every third round the command line joins in, on the file itself, for the same rack; the
      // servers' claims then leave at staggered moments, so that each side is sometimes first.
      const cli = r % 3 === 0
      const delay = cli ? ((r / 3) % 4) * 150 : 0
      const later = (f: () => Promise<string>) => new Promise<string>((resolve) => setTimeout(() => resolve(f()), delay))
      racers.push(
        later(() => claimOn(clients[0], C(r, 1), H(r, 1))),
        later(() => claimOn(clients[1], C(r, 2), H(r, 2))),
      )
      if (cli) {
        racers.push(
          placemat([
            'claim',
            C(r, 3),
            '--group',
            'solo',
            '--resources',
            'VCPU:1',
            '--member-of',
            `rack:rack-${r}`,
            '--project',
            'p',
            '--user',
            'u',
            '--db',
            db,
          ]).then((res) => (res.code === 0 ? 'won' : res.code === 4 ? 'refused' : `error: exit ${res.code}: ${res.stderr}`)),
        )
      }
      const got = await Promise.all(racers)
      outcomes.push(got)
      expect(
        got.filter((o) => o.startsWith('error')),
        `round ${r}: ${got}`,
      ).toEqual([])
      expect(
        got.filter((o) => o === 'won'),
        `round ${r}: ${got}`,
      ).toHaveLength(1)
    }
    const group = await clients[0].get<{members: string[]; violations: unknown[]; placements: Array<{rack: string[]}>}>(
      '/placemat/v1/groups/solo',
    )
    expect(group.violations).toEqual([])
    expect(group.members).toHaveLength(ROUNDS)
    const racks = group.placements.flatMap((p) => p.rack)
    expect(new Set(racks).size).toBe(ROUNDS)
    // Both servers and the CLI won some rounds: the race was real on every side.
    const winners = outcomes.map((o) => o.indexOf('won'))
    if (process.env.RACE_TALLY) console.log(JSON.stringify(outcomes))
    expect(new Set(winners).size).toBeGreaterThan(1)
  }, 180_000)
})
