/**
 * `placemat claim` on the real binary: the retry down the candidate list when a concurrent
 * claimer takes the first candidate, consumer generation conflicts, release / move / show,
 * topology rules checked at write time, spread in one transaction, and many anti-affinity
 * claimers racing on one daemon. Against a daemon (--url), a file (--db) and a "plain
 * Placement" (the daemon behind a proxy hiding /placemat/..., with --layout).
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {PlacementClient} from '../../src/client/client.js'
import {HttpTransport} from '../../src/client/transports.js'
import {LocalTransport} from '../../src/cli/backend/local-transport.js'
import type {Layout} from '../../src/core/topology.js'
import {startServer, type RunningServer} from '../../src/daemon/server.js'
import {mapLimit} from '../../src/client/map-limit.js'
import {claim} from '../../src/cli/services/claim.js'
import {plainProxy, seed, U, type HostSpec} from '../helpers/claim-cloud.js'
import YAML from 'yaml'
import {placemat, type Result} from '../helpers/cli.js'
import {chooseBackend} from '../../src/cli/backend/choose.js'
// Every claim asks which backend it talks to, and the daemon's and the file's claims below run
// in parallel in this process: their backends are loaded here, once, rather than by two dynamic
// imports racing in the test runner (one of them saw the other's module half made).
import '../../src/cli/backend/local.js'
import {newDb} from '../helpers/endpoints.js'
const exec = (args: string[], env: Record<string, string> = {}) => placemat(args, {env})

const json = (r: Result) => {
  expect(r.code, r.stderr).toBe(0)
  return JSON.parse(r.stdout)
}

/** A daemon and a file with the same cloud, and a plain-Placement proxy in front of the daemon. */
interface Env {
  dir: string
  server: RunningServer
  proxy: {url: string; close(): Promise<void>}
  daemon: string[]
  file: string[]
  plain: string[]
  close(): Promise<void>
}

async function makeEnv(hosts: HostSpec[], layout?: Layout): Promise<Env> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-cli-claim-'))
  const server = await startServer({db: path.join(dir, 'daemon.db'), host: '127.0.0.1', port: 0, auth: 'noauth2'})
  await seed(new PlacementClient(new HttpTransport(server.url, 'admin')), hosts, layout)
  const file = path.join(dir, 'file.db')
  await newDb(file)
  const local = new PlacementClient(await LocalTransport.open(file))
  await seed(local, hosts, layout)
  await local.close()
  const proxy = await plainProxy(server.url)
  const layoutFile = path.join(dir, 'layout.json')
  fs.writeFileSync(layoutFile, JSON.stringify(layout ?? {}))
  return {
    dir,
    server,
    proxy,
    daemon: ['--url', server.url, '--token', 'admin'],
    file: ['--db', file],
    plain: ['--url', proxy.url, '--token', 'admin', '--layout', layoutFile],
    async close() {
      await proxy.close()
      await server.close()
      fs.rmSync(dir, {recursive: true, force: true})
    },
  }
}

const C = (n: number) => `c0000000-0000-4000-8000-${String(n).padStart(12, '0')}`
const OWN = ['--project', 'p', '--user', 'u']
const hostOf = (allocations: Record<string, unknown>) => Object.keys(allocations).map((u) => Number(u.slice(-3)))

describe('claim: the first candidate that can still be written', () => {
  let env: Env
  beforeAll(async () => {
    env = await makeEnv([1, 2, 3].map((i) => ({name: `h${i}`, uuid: U(i), vcpu: 8})))
  })
  afterAll(() => env?.close())

  // The claim service runs in this process (the race needs its hook between read and write);
  // the concurrent claimer is the real binary, another process, on the same daemon or file.
  const clientFor = async (t: string[]) =>
    new PlacementClient(t[0] === '--db' ? await LocalTransport.open(t[1]) : new HttpTransport(t[1], 'admin'))
  const claimRacing = async (t: string[], consumer: string, resources: string, replace: boolean, racer: (first: string) => string[]) => {
    const client = await clientFor(t)
    try {
      const out = await claim(
        {client, backend: () => chooseBackend(client, {local: t[0] === '--db'})},
        {resources},
        {
          consumer,
          own: {project: 'p', user: 'u'},
          replace,
          beforeFirstWrite: async (first) => void json(await exec([...racer(Object.keys(first ?? {})[0]), ...t])),
        },
      )
      const {search: _search, ...rest} = out
      return rest
    } finally {
      await client.close()
    }
  }

  it('lands on the next candidate when a concurrent claimer took the first (daemon and file agree)', async () => {
    // After the candidates are read, another process fills the first candidate's host.
    const [d, f] = await Promise.all(
      [env.daemon, env.file].map((t) =>
        claimRacing(t, C(1), 'VCPU:4', false, (first) => [
          'allocation',
          'set',
          C(99),
          '--allocation',
          `rp=${first},VCPU=6`,
          ...OWN,
          '--json',
        ]),
      ),
    )
    expect(d).toEqual(f)
    // placemat writes every claim where it checks the consumer's placement groups.
    expect(d).toMatchObject({
      consumer_uuid: C(1),
      candidate: 2,
      alternates: 1,
      attempts: 2,
      refreshes: 0,
      consumer_generation: 1,
      via: 'POST /placemat/v1/claims',
    })
    expect(hostOf(d.allocations)).toEqual([2])
    // The concurrent claimer really holds h1.
    const other = json(await exec(['claim', 'show', C(99), '--json', ...env.daemon]))
    expect(hostOf(other.allocations)).toEqual([1])
  })

  it('re-reads the consumer generation on a consumer generation conflict and tries the same candidate', async () => {
    const run = async (t: string[]) => {
      json(await exec(['claim', C(2), '--resources', 'VCPU:1', ...OWN, '--json', ...t]))
      // Between the read and the write, someone else updates C(2) (its generation moves on).
      const out = await claimRacing(t, C(2), 'VCPU:1', true, () => [
        'allocation',
        'set',
        C(2),
        '--amend',
        '--allocation',
        `rp=${U(3)},VCPU=1`,
        '--json',
      ])
      expect(out).toMatchObject({candidate: 1, attempts: 2, consumer_generation: 3})
      const shown = json(await exec(['claim', 'show', C(2), '--json', ...t]))
      expect(shown.consumer_generation).toBe(3)
      expect(Object.keys(shown.allocations)).toHaveLength(1)
    }
    await Promise.all([env.daemon, env.file].map(run))
  })

  it('prints the winner, its position and the alternates left', async () => {
    const r = await exec(['claim', C(3), '--resources', 'VCPU:1', ...OWN, '--consumer-type', 'INSTANCE', ...env.daemon])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^consumer\s+c0000000-0000-4000-8000-000000000003$/m)
    expect(r.stdout).toMatch(/^candidate\s+\d of 3$/m)
    expect(r.stdout).toMatch(/^allocations\s+h\d: VCPU=1$/m)
    const shown = json(await exec(['claim', 'show', C(3), '--json', ...env.daemon]))
    expect(shown.consumer_type).toBe('INSTANCE')
  })

  it('conflicts and usage errors', async () => {
    await Promise.all(
      [env.daemon, env.file].map(async (t) => {
        json(await exec(['claim', C(4), '--resources', 'VCPU:1', ...OWN, '--json', ...t]))
        const [again, none, noProject, bad] = await Promise.all([
          exec(['claim', C(4), '--resources', 'VCPU:1', ...OWN, ...t]),
          exec(['claim', C(50), '--resources', 'VCPU:100', ...OWN, ...t]),
          exec(['claim', C(51), '--resources', 'VCPU:1', ...t]),
          exec(['claim', 'not-a-uuid', '--resources', 'VCPU:1', ...OWN, ...t]),
        ])
        expect(again.code).toBe(4)
        expect(again.stderr).toBe(`placemat: consumer ${C(4)} already has allocations (release it first, or --replace)\n`)
        expect(none.code).toBe(4)
        expect(none.stderr).toContain('no allocation candidates')
        expect(noProject.code).toBe(2)
        expect(noProject.stderr).toContain('give --project and --user')
        expect(bad.code).toBe(2)
      }),
    )
  })
})

// rooms m1 (rows r1 r2 r3) and m2 (rows r4 r5 r6); row rN has racks kN1 (host hN1) and kN2 (host hN2).
const ROWS = 6
const TOPO_HOSTS: HostSpec[] = []
const TOPO_LAYOUT: Layout = {
  rooms: [
    {name: 'm1', rows: []},
    {name: 'm2', rows: []},
  ],
}
for (let r = 1; r <= ROWS; r++) {
  const row = {name: `r${r}`, racks: [] as Array<{name: string; hosts: string[]}>}
  for (let k = 1; k <= 2; k++) {
    const n = r * 10 + k
    TOPO_HOSTS.push({name: `h${n}`, uuid: U(n), vcpu: 16})
    row.racks.push({name: `k${n}`, hosts: [`h${n}`]})
  }
  TOPO_LAYOUT.rooms![r <= 3 ? 0 : 1].rows!.push(row)
}
const rowOf = (host: number) => `r${Math.floor(host / 10)}`

describe('claim with topology', () => {
  let env: Env
  beforeAll(async () => {
    env = await makeEnv(TOPO_HOSTS, TOPO_LAYOUT)
  })
  afterAll(() => env?.close())

  const where = async (t: string[], consumer: string) => json(await exec(['claim', 'show', consumer, '--json', ...t])).topology

  it('same / different at each level: checked at the write on placemat, filters on plain Placement', async () => {
    const anchor = C(100)
    for (const t of [env.daemon, env.file, env.plain]) {
      // plain shares the daemon's data: the anchor is claimed once there.
      if (t !== env.plain) json(await exec(['claim', anchor, '--resources', 'VCPU:1', '--in-tree', 'h22', ...OWN, '--json', ...t]))
    }
    const cases: Array<[string, string, (w: any) => boolean]> = [
      ['same', 'rack', (w) => w.rack[0] === 'k22'],
      ['different', 'rack', (w) => w.rack[0] !== 'k22'],
      ['same', 'row', (w) => w.row[0] === 'r2'],
      ['different', 'row', (w) => w.row[0] !== 'r2'],
      ['same', 'room', (w) => w.room[0] === 'm1'],
      ['different', 'room', (w) => w.room[0] === 'm2'],
    ]
    const runs = cases.flatMap(([relation, level, check], i) =>
      [env.daemon, env.file, env.plain].map((t, j) => ({relation, level, check, t, c: C(101 + i * 3 + j)})),
    )
    await mapLimit(runs, 6, async ({relation, level, check, t, c}) => {
      const out = json(await exec(['claim', c, '--resources', 'VCPU:1', `--${relation}`, `${level}:${anchor}`, ...OWN, '--json', ...t]))
      expect(out.via).toBe(t === env.plain ? 'PUT /allocations' : 'POST /placemat/v1/claims')
      const w = await where(t === env.plain ? env.daemon : t, c)
      expect(check(w), `${relation} ${level}: ${JSON.stringify(w)}`).toBe(true)
    })
  }, 90_000)

  it('--near claims the closest place, --far the farthest', async () => {
    const anchor = C(100) // on h22
    const near = json(await exec(['claim', C(150), '--resources', 'VCPU:1', '--near', anchor, ...OWN, '--json', ...env.daemon]))
    expect(hostOf(near.allocations)).toEqual([22])
    const far = json(await exec(['claim', C(151), '--resources', 'VCPU:1', '--far', anchor, ...OWN, '--json', ...env.plain]))
    expect(rowOf(hostOf(far.allocations)[0])).toMatch(/r[456]/)
  })

  it('spread: N consumers in N distinct rows in one write; more than there are rows claims nothing', async () => {
    const run = async (t: string[]) => {
      const out = json(await exec(['claim', '--count', '3', '--spread', 'row', 'web', '--resources', 'VCPU:2', ...OWN, '--json', ...t]))
      expect(out.via).toBe('POST /placemat/v1/claims')
      expect(out.claims).toHaveLength(3)
      const rows = out.claims.map((c: any) => c.row)
      expect(new Set(rows).size).toBe(3)
      for (const c of out.claims) expect(rowOf(hostOf(c.allocations)[0])).toBe(c.row)
      expect(out.claims.map((c: any) => c.label)).toEqual(['web-1', 'web-2', 'web-3'])
      const shown = await Promise.all(out.claims.map((c: any) => where(t, c.consumer_uuid)))
      expect(shown.map((w: any) => w.row[0])).toEqual(rows)
      // claim show takes the names the claim gave.
      const byName = json(await exec(['claim', 'show', 'web-2', '--json', ...t]))
      expect(hostOf(byName.allocations)).toEqual(hostOf(out.claims[1].allocations))

      const tooMany = await exec([
        'claim',
        '--count',
        String(ROWS + 1),
        '--spread',
        'row',
        'e0000000-0000-4000-8000-',
        '--resources',
        'VCPU:1',
        ...OWN,
        ...t,
      ])
      expect(tooMany.code).toBe(4)
      expect(tooMany.stderr).toContain('nothing claimed')
      const client = new PlacementClient(t === env.daemon ? new HttpTransport(env.server.url, 'admin') : await LocalTransport.open(t[1]))
      const consumers = (await client.get('/placemat/v1/consumers')).consumers
      await client.close()
      expect(consumers.filter((c: any) => c.uuid.startsWith('e0000000'))).toEqual([])
    }
    await Promise.all([env.daemon, env.file].map(run))
  }, 90_000)

  it('spread by room with a uuid list, and against plain Placement (one POST /allocations)', async () => {
    const list = `${C(160)},${C(161)}`
    const out = json(await exec(['claim', '--spread', 'room', list, '--resources', 'VCPU:1', ...OWN, '--json', ...env.plain]))
    expect(out.via).toBe('POST /allocations')
    expect(out.claims.map((c: any) => c.room).sort()).toEqual(['m1', 'm2'])
    const bad = await exec(['claim', '--count', '3', '--spread', 'room', list, '--resources', 'VCPU:1', ...OWN, ...env.plain])
    expect(bad.code).toBe(2)
    const three = await exec(['claim', '--count', '3', '--spread', 'room', 'x', '--resources', 'VCPU:1', ...OWN, ...env.plain])
    expect(three.code).toBe(4)
  })

  it('release, move to a migration consumer and back, show', async () => {
    const run = async (t: string[]) => {
      const inst = C(170)
      const mig = C(171)
      json(await exec(['claim', inst, '--resources', 'VCPU:3', '--in-tree', 'h51', ...OWN, '--consumer-type', 'INSTANCE', '--json', ...t]))
      const moved = json(await exec(['claim', 'move', inst, '--to', mig, '--json', ...t]))
      expect(moved).toMatchObject({consumer_uuid: inst, migration_uuid: mig, overwrote: false})
      expect(json(await exec(['claim', 'show', inst, '--json', ...t])).allocations).toEqual({})
      const m = json(await exec(['claim', 'show', mig, '--json', ...t]))
      expect(m).toMatchObject({
        project_id: 'p',
        user_id: 'u',
        consumer_type: 'MIGRATION',
        topology: {rack: ['k51'], row: ['r5'], room: ['m2']},
      })
      expect(m.allocations[U(51)].resources).toEqual({VCPU: 3})
      const table = await exec(['claim', 'show', mig, ...t])
      expect(table.stdout.split('\n')[1]).toMatch(/^h51\s+\S+\s+VCPU=3\s+k51\s+r5\s+m2$/)
      // Revert: back to the instance.
      // Moving back is a revert: the instance gets its allocations back as an INSTANCE, not a MIGRATION.
      // As text, each provider with what it holds.
      const back = await exec(['claim', 'move', mig, '--to', inst, ...t])
      expect(back.code, back.stderr).toBe(0)
      expect(back.stdout).toMatch(new RegExp(`^allocations\\s+${U(51)}: VCPU=3$`, 'm'))
      expect(json(await exec(['claim', 'show', inst, '--json', ...t])).consumer_type).toBe('INSTANCE')
      expect((await exec(['claim', 'move', mig, '--to', inst, ...t])).code).toBe(3)
      expect(json(await exec(['claim', 'release', inst, '--json', ...t]))).toEqual({released: inst})
      expect((await exec(['claim', 'release', inst, ...t])).code).toBe(3)
    }
    await Promise.all([run(env.daemon), run(env.file)])
  }, 90_000)
})

describe('claim move keeps what the consumer was', () => {
  let env: Env
  beforeAll(async () => {
    env = await makeEnv(TOPO_HOSTS, TOPO_LAYOUT)
  })
  afterAll(() => env?.close())

  const show = async (t: string[], c: string) => json(await exec(['claim', 'show', c, '--json', ...t]))

  it('after a move the consumer is claimed again without --project/--user, as what it was; a revert keeps its type, none included', async () => {
    const run = async (t: string[], base: number) => {
      const [inst, mig, plain, plainMig, custom, customMig] = [0, 1, 2, 3, 4, 5].map((i) => C(base + i))
      // An untyped instance: its migration consumer gets no type (written at 1.37), and the
      // instance is claimed again on another host as p2/u2's, still untyped.
      json(await exec(['claim', inst, '--resources', 'VCPU:1', '--in-tree', 'h61', '--project', 'p2', '--user', 'u2', '--json', ...t]))
      expect(json(await exec(['claim', 'move', inst, '--to', mig, '--json', ...t]))).toMatchObject({consumer_type: null})
      expect(await show(t, mig)).toMatchObject({project_id: 'p2', user_id: 'u2', consumer_type: 'unknown'})
      json(await exec(['claim', inst, '--resources', 'VCPU:1', '--in-tree', 'h62', '--json', ...t]))
      expect(await show(t, inst)).toMatchObject({project_id: 'p2', user_id: 'u2', consumer_type: 'unknown', topology: {rack: ['k62']}})
      // Reverting an untyped consumer's move: it stays untyped.
      json(await exec(['claim', plain, '--resources', 'VCPU:1', '--in-tree', 'h61', ...OWN, '--json', ...t]))
      json(await exec(['claim', 'move', plain, '--to', plainMig, '--json', ...t]))
      expect(json(await exec(['claim', 'move', plainMig, '--to', plain, '--json', ...t]))).toMatchObject({consumer_type: null})
      expect(await show(t, plain)).toMatchObject({project_id: 'p', consumer_type: 'unknown'})
      // A type of its own comes back with the revert (not INSTANCE); the migration consumer is a MIGRATION.
      json(await exec(['claim', custom, '--resources', 'VCPU:1', '--in-tree', 'h61', ...OWN, '--consumer-type', 'BATCH', '--json', ...t]))
      expect(json(await exec(['claim', 'move', custom, '--to', customMig, '--json', ...t]))).toMatchObject({consumer_type: 'MIGRATION'})
      expect(json(await exec(['claim', 'move', customMig, '--to', custom, '--json', ...t]))).toMatchObject({consumer_type: 'BATCH'})
      expect(await show(t, custom)).toMatchObject({consumer_type: 'BATCH'})
    }
    await Promise.all([run(env.daemon, 300), run(env.file, 320)])
  }, 90_000)

  it('on plain Placement a move and its revert never invent a type', async () => {
    const [inst, mig] = [C(340), C(341)]
    const plain = env.plain.slice(0, 4) // claim move takes no --layout
    json(await exec(['claim', inst, '--resources', 'VCPU:1', '--in-tree', 'h61', ...OWN, '--json', ...env.plain]))
    expect(json(await exec(['claim', 'move', inst, '--to', mig, '--json', ...plain]))).toMatchObject({consumer_type: null})
    expect(json(await exec(['claim', 'move', mig, '--to', inst, '--json', ...plain]))).toMatchObject({consumer_type: null})
    expect(await show(env.daemon, inst)).toMatchObject({consumer_type: 'unknown'})
  })

  it('a consumer record without allocations gives its project, user, type and generation to the claim', async () => {
    const exported = await exec(['export', ...env.file])
    expect(exported.code, exported.stderr).toBe(0)
    const snap = YAML.parse(exported.stdout)
    const idle = C(350)
    snap.consumers.push({uuid: idle, project_id: 'p9', user_id: 'u9', consumer_type: 'INSTANCE', generation: 4, allocations: {}})
    const file = path.join(env.dir, 'idle.db')
    const imported = await placemat(['import', '-', '--db', file], {input: YAML.stringify(snap)})
    expect(imported.code, imported.stderr).toBe(0)
    const claimed = json(await exec(['claim', idle, '--resources', 'VCPU:1', '--json', '--db', file]))
    expect(claimed.consumer_generation).toBe(5)
    expect(await show(['--db', file], idle)).toMatchObject({
      project_id: 'p9',
      user_id: 'u9',
      consumer_type: 'INSTANCE',
      consumer_generation: 5,
    })
  })
})

describe('anti-affinity claimers racing on one daemon', () => {
  let env: Env
  beforeAll(async () => {
    env = await makeEnv(TOPO_HOSTS, TOPO_LAYOUT)
  })
  afterAll(() => env?.close())

  it('12 parallel claims, each in a different row from all the others: never two in one row', async () => {
    const group = Array.from({length: 12}, (_, i) => C(200 + i))
    const results = await Promise.all(
      group.map((me) =>
        exec([
          'claim',
          me,
          '--resources',
          'VCPU:1',
          '--different',
          `row:${group.filter((o) => o !== me).join(',')}`,
          ...OWN,
          '--json',
          ...env.daemon,
        ]),
      ),
    )
    const won = results.filter((r) => r.code === 0).map((r) => JSON.parse(r.stdout))
    const lost = results.filter((r) => r.code !== 0)
    for (const r of lost) {
      expect(r.code, r.stderr).toBe(4)
    }
    const rows = won.map((w) => rowOf(hostOf(w.allocations)[0]))
    expect(new Set(rows).size, rows.join(',')).toBe(rows.length)
    expect(won).toHaveLength(ROWS)
    // And what is stored agrees.
    const consumers = (await (await fetch(`${env.server.url}/placemat/v1/consumers`, {headers: {'x-auth-token': 'admin'}})).json())
      .consumers
    const storedRows = consumers.map((c: any) => rowOf(hostOf(c.allocations)[0]))
    expect(storedRows.sort()).toEqual(['r1', 'r2', 'r3', 'r4', 'r5', 'r6'])
  })
})
