/**
 * placemat's container image (deploy/image): built once with buildah in a storage root of the
 * test's own, then run with podman on SQLite (a named volume) and on PostgreSQL (the URL in the
 * environment). Each time: the Placement API answers, the process is not root, SIGTERM from
 * `podman stop` ends it with exit 0, and a new container finds the provider and the allocation
 * the first one wrote; `db upgrade` runs as a one-shot container. On SQLite the daemon runs with
 * its default auth (the token it makes on the volume) and the command line inside the container
 * finds it, commands with positional arguments too (`provider show NAME`, `host show`, `import
 * FILE`, `claim CONSUMER`); on PostgreSQL with the Deployment's drain flags, and the URL's
 * password is on no command line. Skipped, saying so, where
 * podman, buildah or runc are missing. Build time, image size and the time from `podman run`
 * to the first 200 on health are printed.
 */
import {randomUUID} from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import pg from 'pg'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {ROOT} from '../helpers/db-tools.js'
import {missingContainerTools, podmanSandbox, type Sandbox} from '../helpers/podman.js'
import {postgresAvailable, startPostgres, type TestPostgres} from '../helpers/postgres.js'
import {freePort} from '../helpers/ports.js'

const VERSION = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version as string
const IMAGE = `localhost/placemat:${VERSION}`
const SOURCE = 'https://example.org/placemat.git'
const DATA = '/var/lib/placemat'

const available = missingContainerTools.length === 0
if (!available) console.warn(`image.test.ts: ${missingContainerTools.join(', ')} missing (apt-get install podman buildah runc): skipped`)

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const HEADERS = {'openstack-api-version': 'placement 1.39', 'content-type': 'application/json'}

describe.skipIf(!available)('the container image', () => {
  let box: Sandbox
  const inspect = async (what: string, format: string) => {
    const r = await box.run(['inspect', '--format', format, what])
    expect(r.code, r.stderr).toBe(0)
    return r.stdout.trim()
  }

  beforeAll(async () => {
    box = podmanSandbox()
    const started = Date.now()
    const built = await box.run([path.join(ROOT, 'deploy/image/build.sh')], {tool: 'bash', env: {PLACEMAT_IMAGE_SOURCE: SOURCE}})
    expect(built.code, built.stderr).toBe(0)
    expect(built.stdout.trim().split('\n').at(-1)).toBe(IMAGE)
    const size = Number(await inspect(IMAGE, '{{.Size}}'))
    console.log(`image ${IMAGE}: built in ${((Date.now() - started) / 1000).toFixed(1)} s, ${(size / 1e6).toFixed(1)} MB`)
    // The build installs the production dependencies and compiles better-sqlite3 when no prebuilt
    // binary is fetched: minutes on a busy machine, longer than the suite's hook timeout.
  }, 1_800_000)

  afterAll(async () => {
    await box?.dispose()
  })

  /** Starts the daemon in a container on `port` and waits for health's first 200. */
  const startDaemon = async (
    port: number,
    opts: {auth: string; volume?: string; env?: Record<string, string>; podmanEnv?: string[]; args?: string[]},
  ) => {
    const name = box.containerName()
    const started = Date.now()
    const r = await box.run(
      [
        'run',
        '--detach',
        '--name',
        name,
        '--network',
        'host',
        '--env',
        `PLACEMAT_HEALTH_URL=http://127.0.0.1:${port}/placemat/v1/health`,
        ...(opts.podmanEnv ?? []).flatMap((v) => ['--env', v]),
        ...(opts.volume ? ['--volume', `${opts.volume}:${DATA}`] : []),
        IMAGE,
        'daemon',
        'start',
        '--foreground',
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--auth',
        opts.auth,
        ...(opts.args ?? []),
      ],
      {env: opts.env},
    )
    expect(r.code, r.stderr).toBe(0)
    const created = Date.now()
    const url = `http://127.0.0.1:${port}`
    for (;;) {
      const res = await fetch(`${url}/placemat/v1/health`, {signal: AbortSignal.timeout(5000)}).catch(() => null)
      if (res?.status === 200) break
      if ((await inspect(name, '{{.State.Status}}')) !== 'running') {
        throw new Error(`the container exited: ${(await box.run(['logs', name])).stderr}`)
      }
      if (Date.now() - started > 120_000) throw new Error(`no 200 on health after 120 s: ${(await box.run(['logs', name])).stdout}`)
      await sleep(100)
    }
    // podman run's own part is mostly vfs copying the image for the container (overlay does not).
    console.log(
      `container start to first 200 on health: ${Date.now() - started} ms (podman run ${created - started} ms, then ${Date.now() - created} ms)`,
    )
    return {name, url}
  }

  /** `podman stop` (SIGTERM, SIGKILL after 30 s): the daemon must exit by itself, with 0. */
  const stop = async (name: string) => {
    const started = Date.now()
    const r = await box.run(['stop', '--time', '30', name])
    expect(r.code, r.stderr).toBe(0)
    console.log(`podman stop: ${Date.now() - started} ms`)
    expect(await inspect(name, '{{.State.Status}} {{.State.ExitCode}}')).toBe('exited 0')
    expect((await box.run(['rm', name])).code).toBe(0)
  }

  const notRoot = async (name: string) => {
    const pid = await inspect(name, '{{.State.Pid}}')
    const uids = fs
      .readFileSync(`/proc/${pid}/status`, 'utf8')
      .match(/^Uid:\s+(.*)$/m)![1]
      .split(/\s+/)
    expect(uids).toEqual(['10001', '10001', '10001', '10001'])
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8')
  }

  /** A daemon's URL and the admin's token (the volume's token file with --auth token; noauth2: admin). */
  interface Api {
    url: string
    token: string
  }
  const call = async ({url, token}: Api, method: string, p: string, body?: unknown) => {
    const res = await fetch(`${url}${p}`, {
      method,
      headers: {...HEADERS, 'x-auth-token': token},
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    return {status: res.status, body: text ? JSON.parse(text) : undefined}
  }

  /** A provider with inventory and a consumer's allocation against it. */
  const write = async (api: Api) => {
    const versions = await call(api, 'GET', '/')
    expect(versions.status).toBe(200)
    expect(versions.body.versions[0]).toMatchObject({id: 'v1.0', max_version: '1.39'})
    const rp = randomUUID()
    const consumer = randomUUID()
    expect((await call(api, 'POST', '/resource_providers', {uuid: rp, name: `cn-${rp.slice(0, 8)}`})).status).toBe(200)
    const inv = await call(api, 'PUT', `/resource_providers/${rp}/inventories`, {
      resource_provider_generation: 0,
      inventories: {VCPU: {total: 16}, MEMORY_MB: {total: 65536}},
    })
    expect(inv.status).toBe(200)
    const alloc = await call(api, 'PUT', `/allocations/${consumer}`, {
      allocations: {[rp]: {resources: {VCPU: 4, MEMORY_MB: 8192}}},
      project_id: randomUUID(),
      user_id: randomUUID(),
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    })
    expect(alloc.status).toBe(204)
    return {rp, consumer}
  }

  const stillThere = async (api: Api, {rp, consumer}: {rp: string; consumer: string}) => {
    expect((await call(api, 'GET', `/resource_providers/${rp}/inventories`)).body.inventories).toMatchObject({
      VCPU: {total: 16},
      MEMORY_MB: {total: 65536},
    })
    expect((await call(api, 'GET', `/allocations/${consumer}`)).body.allocations).toEqual({
      [rp]: {generation: 2, resources: {VCPU: 4, MEMORY_MB: 8192}},
    })
    expect((await call(api, 'GET', `/resource_providers/${rp}/usages`)).body.usages).toEqual({VCPU: 4, MEMORY_MB: 8192})
  }

  it('is labelled, runs as uid 10001 with its data on a volume, and holds no development dependency', async () => {
    expect(await inspect(IMAGE, '{{.Config.User}}')).toBe('10001:10001')
    const labels = JSON.parse(await inspect(IMAGE, '{{json .Labels}}'))
    expect(labels).toMatchObject({'org.opencontainers.image.version': VERSION, 'org.opencontainers.image.source': SOURCE})
    expect(JSON.parse(await inspect(IMAGE, '{{json .Config.Volumes}}'))).toHaveProperty([DATA])
    expect(await inspect(IMAGE, '{{json .HealthCheck.Test}}')).toContain('/opt/placemat/healthcheck.mjs')
    const name = box.containerName()
    const r = await box.run([
      'run',
      '--rm',
      '--name',
      name,
      '--network',
      'host',
      '--entrypoint',
      '/usr/bin/node',
      IMAGE,
      '-e',
      `const fs = require('fs'); const has = (p) => fs.existsSync('/opt/placemat/node_modules/' + p);
       console.log(JSON.stringify({dev: ['vitest', 'typescript', 'esbuild', 'oclif'].filter(has), prod: ['fastify', 'better-sqlite3', 'pg'].filter(has),
         shell: fs.existsSync('/bin/sh'), data: fs.statSync('${DATA}').uid}))`,
    ])
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual({dev: [], prod: ['fastify', 'better-sqlite3', 'pg'], shell: false, data: 10001})
  })

  it('serves Placement on SQLite, stops on SIGTERM with exit 0, and a new container finds the data on the volume', async () => {
    const volume = `placemat-test-${process.pid}-sqlite`
    expect((await box.run(['volume', 'create', volume])).code).toBe(0)
    const port = await freePort()
    const first = await startDaemon(port, {volume, auth: 'token'})
    await notRoot(first.name)
    const hc = await box.run(['healthcheck', 'run', first.name])
    expect(hc.code, hc.stdout + hc.stderr).toBe(0)
    // The admin token the daemon made on the volume, owner-only.
    const mountpoint = await box.run(['volume', 'inspect', '--format', '{{.Mountpoint}}', volume])
    const tokenFile = path.join(mountpoint.stdout.trim(), 'admin-token')
    expect(fs.statSync(tokenFile)).toMatchObject({uid: 10001, mode: 0o100600})
    const token = fs.readFileSync(tokenFile, 'utf8').trim()
    const written = await write({url: first.url, token})
    // The command line inside the container finds its daemon through the data directory.
    const cli = await box.run(['exec', first.name, '/usr/bin/node', '/opt/placemat/bin/run.js', 'provider', 'list', '--json'])
    expect(cli.code, cli.stderr).toBe(0)
    expect(JSON.parse(cli.stdout).resource_providers.map((p: {uuid: string}) => p.uuid)).toEqual([written.rp])
    // Commands with positional arguments (oclif tells the command's words from its arguments by
    // the manifest the package ships): against the daemon, then on a database file of their own.
    const placemat = async (...args: string[]) => {
      const r = await box.run(['exec', first.name, '/usr/bin/node', '/opt/placemat/bin/run.js', ...args])
      expect(r.code, `placemat ${args.join(' ')}: ${r.stderr}`).toBe(0)
      return r.stdout
    }
    const rpName = `cn-${written.rp.slice(0, 8)}`
    expect(JSON.parse(await placemat('provider', 'show', rpName, '--json'))).toMatchObject({uuid: written.rp, name: rpName})
    expect(JSON.stringify(JSON.parse(await placemat('host', 'show', rpName, '--json')).consumers)).toContain(written.consumer)
    fs.writeFileSync(
      path.join(mountpoint.stdout.trim(), 'empty.yaml'),
      'placemat_snapshot: 1\nresource_classes: []\ntraits: []\nproviders: []\nconsumers: []\n',
    )
    const own = ['--db', '/tmp/cli.db']
    await placemat('db', 'init', ...own)
    await placemat('import', `${DATA}/empty.yaml`, ...own)
    await placemat('provider', 'create', 'cmp-01', ...own)
    await placemat('inventory', 'set', 'cmp-01', 'VCPU=8', ...own)
    const claimed = randomUUID()
    await placemat('claim', claimed, '--resources', 'VCPU:2', '--project', 'p1', '--user', 'u1', ...own)
    expect(JSON.stringify(JSON.parse(await placemat('host', 'show', 'cmp-01', '--json', ...own)).consumers)).toContain(claimed)
    await stop(first.name)

    // The one-shot upgrade on the volume (nothing to do: the daemon made the current schema).
    const upgrade = await box.run([
      'run',
      '--rm',
      '--name',
      box.containerName(),
      '--volume',
      `${volume}:${DATA}`,
      IMAGE,
      'db',
      'upgrade',
      '--db',
      `${DATA}/placemat.db`,
    ])
    expect(upgrade.code, upgrade.stderr).toBe(0)
    expect(upgrade.stdout).toMatch(/already at schema/)

    const second = await startDaemon(port, {volume, auth: 'token'})
    await stillThere({url: second.url, token}, written)
    await stop(second.name)
  })

  describe.skipIf(!postgresAvailable)('on PostgreSQL', () => {
    let postgres: TestPostgres
    const PASSWORD = `pw-${randomUUID()}`
    let dbUrl: string

    beforeAll(async () => {
      postgres = await startPostgres()
      // A role with a password, so that the test can look for it where it must not be.
      const adminUrl = await postgres.database()
      const client = new pg.Client({connectionString: adminUrl})
      await client.connect()
      const dbName = new URL(adminUrl).pathname.slice(1)
      try {
        await client.query(`create role placemat_image login password '${PASSWORD}'`)
        await client.query(`alter database ${dbName} owner to placemat_image`)
      } finally {
        await client.end()
      }
      const u = new URL(adminUrl)
      u.username = 'placemat_image'
      u.password = PASSWORD
      dbUrl = u.toString()
    })
    afterAll(async () => {
      await postgres?.stop()
    })

    it('takes the URL from the environment: a one-shot db upgrade, then the daemon, stopped and started again', async () => {
      // `--env PLACEMAT_DB` without a value: podman passes its own variable, so the URL is on no command line.
      const env = {PLACEMAT_DB: dbUrl}
      const upgrade = await box.run(
        ['run', '--rm', '--name', box.containerName(), '--network', 'host', '--env', 'PLACEMAT_DB', IMAGE, 'db', 'upgrade'],
        {env},
      )
      expect(upgrade.code, upgrade.stderr).toBe(0)
      expect(upgrade.stdout).toMatch(/schema \(none\) -> \d+/)
      expect(upgrade.stdout).not.toContain(PASSWORD)

      const port = await freePort()
      // The Deployment's drain, shorter: SIGTERM, 1 s still serving, then exit 0.
      const drain = ['--shutdown-delay', '1', '--shutdown-timeout', '20']
      const first = await startDaemon(port, {auth: 'noauth2', env, podmanEnv: ['PLACEMAT_DB'], args: drain})
      const cmdline = await notRoot(first.name)
      expect(cmdline).not.toContain(PASSWORD)
      expect(await inspect(first.name, '{{json .Config.Cmd}} {{json .Args}}')).not.toContain(PASSWORD)
      const written = await write({url: first.url, token: 'admin'})
      expect((await box.run(['logs', first.name])).stdout).not.toContain(PASSWORD)
      await stop(first.name)

      const second = await startDaemon(port, {auth: 'noauth2', env, podmanEnv: ['PLACEMAT_DB'], args: drain})
      await stillThere({url: second.url, token: 'admin'}, written)
      await stop(second.name)
    })
  })
})
