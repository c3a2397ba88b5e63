/**
 * A rolling upgrade from placemat 0.1.0 (built here from git history) to this release, without
 * stopping the cloud: claim churn through a balancer all along, `db upgrade --expand` while the
 * old nodes serve, the nodes replaced one at a time on their ports (each drains on SIGTERM),
 * `db upgrade --contract` refused while an old node is live and run once none is. Counted at the
 * end: answers other than 2xx, 409 and 503 (none), acknowledged claims lost (none), providers
 * over capacity (none), and every node's journal position at the head; the longest gap in
 * service is reported, not asserted. Then what each release does on a database contracted past
 * it. On PostgreSQL with three nodes, and on SQLite with one (the old release's --db commands
 * writing to the file meanwhile).
 */
import {spawn, type ChildProcess} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import pg from 'pg'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {startBalancer, type Balancer} from '../helpers/balancer.js'
import {longestGap, startChurn, type ChurnReport} from '../helpers/claim-churn.js'
import {BIN, childEnv, placemat} from '../helpers/cli.js'
import {freePort, until} from '../helpers/foreground-daemon.js'
import {postgresAvailable, startPostgres, type TestPostgres} from '../helpers/postgres.js'
import {PREVIOUS, buildPreviousRelease, previousReleaseMissing, type PreviousRelease} from '../helpers/previous-release.js'

const missing = previousReleaseMissing()
if (missing) console.warn(`rolling-upgrade: skipped: ${missing}`)
if (!missing && !postgresAvailable)
  console.warn('rolling-upgrade: the PostgreSQL run is skipped: no PostgreSQL here (PLACEMAT_TEST_PG_URL or the postgresql package)')

const HEADERS = {'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39', 'content-type': 'application/json'}
const PROVIDERS = 20
const rp = (i: number) => `a0000000-0000-4000-8000-${String(i).padStart(12, '0')}`

interface Node {
  release: string
  port: number
  url: string
  child: ChildProcess
  output: () => string
  exited: Promise<number | null>
}

const live = new Set<Node>()
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** `daemon start --foreground` of `bin` on `port`; resolves once its health answers 200. */
async function startNode(bin: string, release: string, db: string, port: number, home: string): Promise<Node> {
  const child = spawn(
    process.execPath,
    [
      bin,
      'daemon',
      'start',
      '--foreground',
      '--db',
      db,
      '--port',
      String(port),
      '--auth',
      'noauth2',
      '--shutdown-delay',
      '1',
      '--log-level',
      'warn',
    ],
    {
      cwd: path.dirname(path.dirname(bin)),
      env: childEnv({PLACEMAT_HOME: home}),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  let out = ''
  child.stdout!.on('data', (d) => (out += d))
  child.stderr!.on('data', (d) => (out += d))
  const node: Node = {
    release,
    port,
    url: `http://127.0.0.1:${port}`,
    child,
    output: () => out,
    exited: new Promise((r) => child.on('exit', (code) => r(code))),
  }
  live.add(node)
  void node.exited.then(() => live.delete(node))
  await until(async () => {
    if (child.exitCode !== null) throw new Error(`placemat ${release} on ${port} exited ${child.exitCode}: ${out}`)
    return (await health(node.url)).status === 200
  }, `placemat ${release} serving on ${port}`)
  return node
}

/** SIGTERM: the node drains (health 503 while it still serves), then exits 0; resolves with the first health answer other than 200 after the signal. */
async function stopNode(node: Node): Promise<number | string> {
  node.child.kill('SIGTERM')
  let during: number | string = 200
  for (let i = 0; i < 200 && during === 200; i++) {
    during = (await health(node.url)).status
    if (during === 200) await pause(10)
  }
  const code = await Promise.race([node.exited, pause(45_000).then(() => 'timeout')])
  if (code !== 0) node.child.kill('SIGKILL')
  expect(code, node.output()).toBe(0)
  return during
}

async function health(url: string): Promise<{status: number | string; body: any}> {
  try {
    const res = await fetch(`${url}/placemat/v1/health`, {signal: AbortSignal.timeout(5000)})
    return {status: res.status, body: await res.json().catch(() => null)}
  } catch (err) {
    return {status: (err as {cause?: {code?: string}}).cause?.code ?? 'no answer', body: null}
  }
}

/** A cloud of PROVIDERS hosts with small inventories (80 claims of one VCPU fill it). */
async function seedCloud(url: string): Promise<void> {
  for (let i = 1; i <= PROVIDERS; i++) {
    const made = await fetch(`${url}/resource_providers`, {
      method: 'POST',
      headers: HEADERS,
      body: JSON.stringify({uuid: rp(i), name: `host-${i}`}),
    })
    expect(made.status).toBe(200)
    const inv = await fetch(`${url}/resource_providers/${rp(i)}/inventories`, {
      method: 'PUT',
      headers: HEADERS,
      body: JSON.stringify({resource_provider_generation: 0, inventories: {VCPU: {total: 4}, MEMORY_MB: {total: 4096}}}),
    })
    expect(inv.status).toBe(200)
  }
}

type Rows = (query: string) => Promise<Array<Record<string, unknown>>>

/** What the database holds against what the churn was told: acknowledged claims lost, providers over capacity. */
async function audit(rows: Rows, report: ChurnReport): Promise<{lost: string[]; overcommit: string[]}> {
  const held = new Map<string, Record<string, Record<string, number>>>()
  for (const r of await rows('select consumer_uuid, provider_uuid, resource_class, used from allocations')) {
    const c = held.get(String(r.consumer_uuid)) ?? {}
    ;(c[String(r.provider_uuid)] ??= {})[String(r.resource_class)] = Number(r.used)
    held.set(String(r.consumer_uuid), c)
  }
  const lost = [...report.held]
    .filter(([consumer, claim]) => JSON.stringify(sorted(held.get(consumer))) !== JSON.stringify(sorted(claim)))
    .map(([c]) => c)
  const overcommit = (
    await rows(
      `select a.provider_uuid, a.resource_class, sum(a.used) as used, max(i.total) as total, max(i.reserved) as reserved, max(i.allocation_ratio) as ratio
       from allocations a join inventories i on i.provider_uuid = a.provider_uuid and i.resource_class = a.resource_class
       group by a.provider_uuid, a.resource_class`,
    )
  )
    .filter((r) => Number(r.used) > (Number(r.total) - Number(r.reserved)) * Number(r.ratio))
    .map((r) => `${r.resource_class} on ${r.provider_uuid}: ${r.used} used`)
  return {lost, overcommit}
}

const sorted = (claim: Record<string, Record<string, number>> | undefined) =>
  claim
    ? Object.keys(claim)
        .sort()
        .map((p) => [p, Object.entries(claim[p]).sort()])
    : null

/** Waits until every node's journal position is the database's head; returns them. */
async function settle(rows: Rows, nodes: Node[]): Promise<{head: number; positions: number[]}> {
  const head = Number((await rows("select value from placemat_meta where key = 'change_counter'"))[0].value)
  let positions: number[] = []
  await until(
    async () => {
      positions = await Promise.all(nodes.map(async (n) => Number((await health(n.url)).body?.journal?.position ?? -1)))
      return positions.every((p) => p === head)
    },
    `every node at journal position ${head}`,
    30_000,
  ).catch(() => undefined)
  return {head, positions}
}

/** The run's numbers, for the log. */
function summary(
  name: string,
  report: ChurnReport,
  balancer: Balancer,
  a: {lost: string[]; overcommit: string[]},
  s: {head: number; positions: number[]},
): string {
  return (
    `rolling-upgrade ${name}: answers ${JSON.stringify(report.statuses)}; unexpected ${report.unexpected.length}; ` +
    `claims held ${report.held.size}, lost ${a.lost.length}; over capacity ${a.overcommit.length}; longest gap ${longestGap(report.successes)} ms; ` +
    `balancer retried ${balancer.stats.retried} (${balancer.stats.after503} after a 503 ${JSON.stringify(balancer.stats.titles503)}, ${balancer.stats.afterConnection} after a refused or lost connection), gave up ${balancer.stats.gaveUp}; journal head ${s.head}, node positions ${s.positions.join(', ')}`
  )
}

describe.skipIf(missing !== null)(`a rolling upgrade from placemat ${PREVIOUS.release} to this release`, () => {
  let previous: PreviousRelease
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-rolling-'))
  const old = (args: string[], home: string) => placemat(args, {script: previous.bin, env: {PLACEMAT_HOME: home}})
  const now = (args: string[], home: string) => placemat(args, {script: BIN, env: {PLACEMAT_HOME: home}})

  beforeAll(() => {
    previous = buildPreviousRelease()
  }, 240_000)
  afterAll(() => {
    for (const n of live) n.child.kill('SIGKILL')
    previous?.remove()
    fs.rmSync(dir, {recursive: true, force: true})
  })

  describe.skipIf(!postgresAvailable)('three nodes on PostgreSQL', () => {
    let server: TestPostgres
    let client: pg.Client
    beforeAll(async () => {
      server = await startPostgres()
    }, 60_000)
    afterAll(async () => {
      await client?.end().catch(() => undefined)
      await server?.stop()
    })

    it('serves claims throughout: expand, each node replaced behind the balancer, contract', async () => {
      const url = await server.database()
      client = new pg.Client({connectionString: url})
      await client.connect()
      const rows: Rows = async (q) => (await client.query(q)).rows
      // A data directory per node, as on hosts of their own (one pid record each).
      const homes = [0, 1, 2].map((i) => path.join(dir, `pg-${i}`))
      for (const h of homes) fs.mkdirSync(h)
      const cli = path.join(dir, 'pg-cli')
      fs.mkdirSync(cli)
      expect((await old(['db', 'init', '--db', url], cli)).code).toBe(0)
      const ports = [await freePort(), await freePort(), await freePort()]
      const nodes = await Promise.all(ports.map((p, i) => startNode(previous.bin, PREVIOUS.release, url, p, homes[i])))
      const balancer = await startBalancer(nodes.map((n) => n.url))
      await seedCloud(balancer.url)
      // A fifth of the claims resized or released at once, wherever the balancer sends it.
      const churn = startChurn(balancer.url, {followUps: 0.2})
      await pause(2000)

      const expand = await now(['db', 'upgrade', '--expand', '--db', url], cli)
      expect(expand.code, expand.stderr).toBe(0)
      expect(expand.stdout).toContain('(0012_nodes, 0013_keyed_check_v2)')
      await pause(1000)

      const drains: Array<number | string> = []
      for (let i = 0; i < 3; i++) {
        drains.push(await stopNode(nodes[i]))
        nodes[i] = await startNode(BIN, 'this release', url, ports[i], homes[i])
        if (i === 0) {
          // Must show: both releases' nodes listed; the contract refused, naming the old ones.
          await pause(1000)
          const status = await now(['db', 'status', '--db', url], cli)
          console.log(`rolling-upgrade PostgreSQL: db status after the first replacement (exit ${status.code}):\n${status.stdout}`)
          expect(status.stdout).toMatch(/nodes +1 of placemat 0\.2\.0, traces of a release before 0\.2\.0 \(not registered\)/)
          expect(status.stdout).toContain(`placemat 0.2.0 on ${os.hostname()}`)
          expect(status.stdout).toContain(`http://127.0.0.1:${ports[0]}`)
          expect(status.stdout).toMatch(
            /release before 0\.2\.0 \(not registered\): \d+ connection\(s\) from 127\.0\.0\.1 with no application_name/,
          )
          const gate = await now(['upgrade', 'check', '--db', url, '--json'], cli)
          expect(gate.code, gate.stderr).toBe(1)
          const checks = Object.fromEntries(
            JSON.parse(gate.stdout).checks.map((c: {check: string; details: string}) => [c.check, c.details]),
          )
          expect(checks['Schema Migrations']).toContain('placemat db upgrade --contract')
          expect(checks['Nodes Serving the Database']).toContain('release before 0.2.0 (not registered)')
          const refused = await now(['db', 'upgrade', '--contract', '--db', url], cli)
          console.log(`rolling-upgrade PostgreSQL: --contract with old nodes live (exit ${refused.code}): ${refused.stderr.trim()}`)
          expect(refused.code).toBe(4)
          expect(refused.stderr).toContain('release before 0.2.0 (not registered)')
          expect(refused.stderr).toContain('nothing was changed')
        }
        await pause(1000)
      }
      expect(
        drains.every((d) => d === 503),
        `health right after SIGTERM: ${drains.join(', ')}`,
      ).toBe(true)
      // From here every node is of this release: none may answer a follow-up as if it had not seen the claim.
      const allThisRelease = Date.now()
      // The last old node's connections close as it exits: the contract runs once they are gone.
      let contract = await now(['db', 'upgrade', '--contract', '--db', url], cli)
      for (let i = 0; i < 20 && contract.code === 4; i++) {
        await pause(500)
        contract = await now(['db', 'upgrade', '--contract', '--db', url], cli)
      }
      expect(contract.code, contract.stderr).toBe(0)
      expect(contract.stdout).toContain('(0014_retire_keyed_check_v1)')
      await pause(2000)
      const report = await churn.stop()

      const settled = await settle(rows, nodes)
      const a = await audit(rows, report)
      console.log(summary('PostgreSQL', report, balancer, a, settled))
      const stale = report.stale.filter((s) => s.at > allThisRelease)
      console.log(
        `rolling-upgrade PostgreSQL: follow-ups ${report.followUps}, stale ${report.stale.length} (${stale.length} once every node was of this release)`,
      )
      expect(stale).toEqual([])
      expect(report.unexpected).toEqual([])
      expect(a.lost).toEqual([])
      expect(a.overcommit).toEqual([])
      expect(report.statuses[409] ?? 0, 'the cloud filled: some claims were refused').toBeGreaterThan(0)
      expect(settled.positions).toEqual(nodes.map(() => settled.head))
      const status = await now(['db', 'status', '--db', url, '--json'], cli)
      expect(JSON.parse(status.stdout)).toMatchObject({
        state: 'current',
        serves: true,
        min_release: {release: '0.2.0'},
        nodes: {unregistered: []},
      })
      expect(JSON.parse(status.stdout).nodes.registered).toHaveLength(3)

      // What placemat 0.1.0 does on the database this release contracted: it starts (it cannot
      // read the contract's record), and meets the retired keyed check at its first claim.
      const home = path.join(dir, 'pg-old-again')
      fs.mkdirSync(home)
      const again = await startNode(previous.bin, PREVIOUS.release, url, await freePort(), home)
      const claim = await fetch(`${again.url}/allocations/c0000000-0000-4000-8000-000000000001`, {
        method: 'PUT',
        headers: HEADERS,
        // One MB: free on every host, however full the churn left the VCPUs.
        body: JSON.stringify({
          allocations: {[rp(1)]: {resources: {MEMORY_MB: 1}}},
          project_id: 'p',
          user_id: 'u',
          consumer_generation: null,
          consumer_type: 'INSTANCE',
        }),
      })
      const claimBody = await claim.text()
      const after = await health(again.url)
      console.log(
        `rolling-upgrade PostgreSQL: placemat ${PREVIOUS.release} started on the contracted database: health before its first claim 200; ` +
          `PUT /allocations -> ${claim.status} ${claimBody.slice(0, 200)}; health after -> ${after.status} ${JSON.stringify(after.body).slice(0, 200)}; ` +
          `its log: ${again
            .output()
            .split('\n')
            .filter((l) => l.includes('contracted'))
            .slice(0, 1)
            .join('')
            .slice(0, 400)}`,
      )
      expect(claim.status).toBe(503)
      expect(after.status).toBe(503)
      expect(again.output()).toContain('this database was contracted by placemat 0.2.0 (0014_retire_keyed_check_v1)')
      again.child.kill('SIGTERM')
      await again.exited
      for (const n of nodes) await stopNode(n)
      await balancer.close()
      // Each node removed itself as it stopped.
      expect(JSON.parse((await now(['db', 'status', '--db', url, '--json'], cli)).stdout).nodes).toEqual({registered: [], unregistered: []})
    }, 240_000)
  })

  it('one node on SQLite: expand while it serves (the old --db commands writing too), replaced, contract', async () => {
    const home = path.join(dir, 'sqlite')
    fs.mkdirSync(home)
    const file = path.join(home, 'placemat.db')
    const rows: Rows = async (q) => {
      const raw = new SQLite(file, {readonly: true})
      try {
        return raw.prepare(q).all() as Array<Record<string, unknown>>
      } finally {
        raw.close()
      }
    }
    expect((await old(['db', 'init', '--db', file], home)).code).toBe(0)
    const port = await freePort()
    let node = await startNode(previous.bin, PREVIOUS.release, file, port, home)
    const balancer = await startBalancer([node.url])
    await seedCloud(balancer.url)
    const churn = startChurn(balancer.url, {workers: 3})
    await pause(1500)

    const expand = await now(['db', 'upgrade', '--expand', '--db', file], home)
    expect(expand.code, expand.stderr).toBe(0)
    expect(expand.stdout).toContain('(0012_nodes, 0013_keyed_check_v2)')
    const written = await old(['provider', 'create', 'extra-1', '--db', file], home)
    expect(written.code, written.stderr).toBe(0)
    const refused = await now(['db', 'upgrade', '--contract', '--db', file], home)
    console.log(`rolling-upgrade SQLite: --contract with the old daemon serving (exit ${refused.code}): ${refused.stderr.trim()}`)
    expect(refused.code).toBe(4)
    expect(refused.stderr).toContain(`release before 0.2.0 (not registered) on ${os.hostname()}, pid ${node.child.pid}`)

    const drained = await stopNode(node)
    node = await startNode(BIN, 'this release', file, port, home)
    const written2 = await old(['provider', 'create', 'extra-2', '--db', file], home)
    expect(written2.code, written2.stderr).toBe(0)
    await until(async () => {
      const res = await fetch(`${balancer.url}/resource_providers?name=extra-2`, {headers: HEADERS})
      return res.status === 200 && (await res.json()).resource_providers.length === 1
    }, 'this release following what the old command line wrote')
    const contract = await now(['db', 'upgrade', '--contract', '--db', file], home)
    expect(contract.code, contract.stderr).toBe(0)
    await pause(1500)
    const report = await churn.stop()

    const settled = await settle(rows, [node])
    const a = await audit(rows, report)
    console.log(summary('SQLite', report, balancer, a, settled) + `; health right after SIGTERM ${drained}`)
    expect(report.unexpected).toEqual([])
    expect(a.lost).toEqual([])
    expect(a.overcommit).toEqual([])
    expect(settled.positions).toEqual([settled.head])
    expect(drained).toBe(503)
    await stopNode(node)
    await balancer.close()

    // What placemat 0.1.0 does on the file this release contracted: nothing there can stop it.
    const again = await startNode(previous.bin, PREVIOUS.release, file, port, home)
    const claim = await fetch(`${again.url}/allocations/c0000000-0000-4000-8000-000000000002`, {
      method: 'PUT',
      headers: HEADERS,
      body: JSON.stringify({
        allocations: {[rp(2)]: {resources: {MEMORY_MB: 1}}},
        project_id: 'p',
        user_id: 'u',
        consumer_generation: null,
        consumer_type: 'INSTANCE',
      }),
    })
    console.log(
      `rolling-upgrade SQLite: placemat ${PREVIOUS.release} started on the contracted file: health ${(await health(again.url)).status}, PUT /allocations -> ${claim.status}`,
    )
    await stopNode(again)

    // Must show: a release started on a database a newer release contracted is refused, naming both.
    const contracted = path.join(home, 'contracted.db')
    expect((await now(['db', 'init', '--db', contracted], home)).code).toBe(0)
    const raw = new SQLite(contracted)
    raw
      .prepare("update placemat_meta set value = ? where key = 'min_release'")
      .run(JSON.stringify({release: '0.3.0', migration: '0015_simulated_contract'}))
    raw.prepare('insert into kysely_migration (name, timestamp) values (?, ?)').run('0015_simulated_contract', new Date().toISOString())
    raw.close()
    const start = await now(
      ['daemon', 'start', '--foreground', '--db', contracted, '--port', String(await freePort()), '--auth', 'noauth2'],
      home,
    )
    console.log(`rolling-upgrade: this release on a database placemat 0.3.0 contracted (exit ${start.code}): ${start.stderr.trim()}`)
    expect(start.code).toBe(3)
    expect(start.stderr).toContain(
      `database ${contracted} was contracted by placemat 0.3.0 (0015_simulated_contract): it needs placemat 0.3.0 or later; this is placemat 0.2.0`,
    )
  }, 180_000)
})
