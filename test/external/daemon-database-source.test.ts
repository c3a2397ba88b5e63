/**
 * The daemon's database named by placement.conf's [placement_database] connection or by a file
 * holding the URL (--db-url-file, PLACEMAT_DB_FILE: a container's secret): served, found again by
 * `daemon status` and `daemon stop` from the same sources, and its password in none of the
 * output, the pid record, the log or the detached daemon's command line. MySQL is refused,
 * pointing at `placemat import`.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {placemat} from '../helpers/cli.js'
import {failedStart, freePort, startForeground} from '../helpers/foreground-daemon.js'
import {postgresAvailable, startPostgres, type TestPostgres} from '../helpers/postgres.js'

if (!postgresAvailable)
  console.warn('daemon-database-source.test.ts: no PostgreSQL here (apt-get install postgresql): its PostgreSQL tests are skipped')

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-dbsource-'))
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))
let n = 0
/** A fresh folder for one test: its PLACEMAT_HOME. */
const home = () => fs.mkdtempSync(path.join(dir, `h${++n}-`))
const write = (file: string, text: string) => {
  fs.writeFileSync(file, text, {mode: 0o600})
  return file
}

/** Everything a detached daemon of `home` left that others may read: its records, its log, its command line. */
function leftBehind(h: string): string {
  const files = fs.readdirSync(h).filter((f) => f.endsWith('.pid') || f.endsWith('.log'))
  let text = files.map((f) => fs.readFileSync(path.join(h, f), 'utf8')).join('\n')
  for (const f of files.filter((x) => x.endsWith('.pid'))) {
    const {pid} = JSON.parse(fs.readFileSync(path.join(h, f), 'utf8'))
    if (fs.existsSync(`/proc/${pid}/cmdline`)) text += fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8')
  }
  return text
}

describe('the database named by placement.conf or a file', () => {
  it("[placement_database] connection = sqlite:////PATH: the daemon serves that file; SQLAlchemy's mysql+pymysql:// is taken as a MariaDB URL, its password never said", async () => {
    const h = home()
    const db = path.join(h, 'from-conf.db')
    const conf = write(path.join(h, 'placement.conf'), `[placement_database]\nconnection = sqlite:///${db}\n`)
    const d = await startForeground(['--config-file', conf, '--auth', 'noauth2'], {PLACEMAT_HOME: h})
    try {
      expect(d.output()).toContain(`database ${db}`)
      expect((await fetch(`${d.url}/resource_providers`, {headers: {'x-auth-token': 'admin'}})).status).toBe(200)
      expect(fs.existsSync(db)).toBe(true)
    } finally {
      await d.stop()
    }

    // Nothing listens on the port: the daemon waits for that MariaDB (--db-wait 2), naming it without its password.
    const port = await freePort()
    write(conf, `[placement_database]\nconnection = mysql+pymysql://placement:s3cret-my@127.0.0.1:${port}/placement\n`)
    const waited = await placemat(['daemon', 'start', '--foreground', '--config-file', conf, '--db-wait', '2'], {env: {PLACEMAT_HOME: h}})
    expect(waited.code).toBe(1)
    expect(waited.stderr).toContain(`database mysql://placement:***@127.0.0.1:${port}/placement did not answer within the wait`)
    expect(waited.stdout + waited.stderr).not.toContain('s3cret-my')
  })

  it('a URL file that cannot be read, or is empty, stops the daemon naming the file', async () => {
    const h = home()
    const missing = await failedStart(['--db-url-file', path.join(h, 'nope')], {PLACEMAT_HOME: h})
    expect(missing.code).toBe(1)
    expect(missing.output).toContain(`placemat: ${path.join(h, 'nope')} (--db-url-file): no such file`)
    const empty = await failedStart([], {PLACEMAT_HOME: h, PLACEMAT_DB_FILE: write(path.join(h, 'empty'), '\n')})
    expect(empty.code).toBe(1)
    expect(empty.output).toContain('(PLACEMAT_DB_FILE): the file is empty')
  })

  describe.skipIf(!postgresAvailable)('PostgreSQL', () => {
    let server: TestPostgres
    beforeAll(async () => {
      server = await startPostgres()
    }, 60000)
    afterAll(() => server?.stop())

    /** A new database's URL with a password (the throwaway server trusts local connections: any is accepted, and must still be kept). */
    const withPassword = async (password: string) => (await server.database()).replace('://postgres@', `://postgres:${password}@`)

    it("placement.conf's postgresql+psycopg2:// connection: served detached, found by status and stop through the same file, its password nowhere", async () => {
      const h = home()
      const url = await withPassword('s3cret-conf')
      const conf = write(
        path.join(h, 'placement.conf'),
        `[placement_database]\nconnection = ${url.replace('postgres://', 'postgresql+psycopg2://')}\n`,
      )
      const env = {PLACEMAT_HOME: h}
      const port = await freePort()
      const started = await placemat(['daemon', 'start', '--config-file', conf, '--port', String(port)], {env})
      expect(started.code, started.stderr).toBe(0)
      try {
        expect(started.stdout + started.stderr).not.toContain('s3cret-conf')
        const token = fs.readFileSync(path.join(h, 'admin-token'), 'utf8').trim()
        const created = await fetch(`http://127.0.0.1:${port}/resource_providers`, {
          method: 'POST',
          headers: {'x-auth-token': token, 'content-type': 'application/json'},
          body: JSON.stringify({name: 'cn-conf'}),
        })
        expect(created.status).toBe(201)
        const status = await placemat(['daemon', 'status', '--config-file', conf, '--json'], {env})
        expect(status.code, status.stderr).toBe(0)
        expect(JSON.parse(status.stdout)).toMatchObject({running: true, answering: true, url: `http://127.0.0.1:${port}`})
        expect(JSON.parse(status.stdout).db).toContain('postgres:***@')
        expect(status.stdout).not.toContain('s3cret-conf')
        expect(leftBehind(h)).not.toContain('s3cret-conf')
        // The data is in the database placement.conf names.
        const listed = await placemat(['provider', 'list', '--db', url, '-f', 'value', '-c', 'name'], {env})
        expect(listed.stdout.trim()).toBe('cn-conf')
      } finally {
        const stopped = await placemat(['daemon', 'stop', '--config-file', conf], {env})
        expect(stopped.stdout).toMatch(/^stopped daemon pid \d+/)
      }
      expect((await placemat(['daemon', 'status', '--config-file', conf], {env})).code).toBe(1)
    })

    it('the URL in a file (--db-url-file, PLACEMAT_DB_FILE) over placement.conf: served, found by status through the same variable, its password nowhere', async () => {
      const h = home()
      const url = await withPassword('s3cret-file')
      const secret = write(path.join(h, 'placemat-db'), `${url}\n`)
      const conf = write(
        path.join(h, 'placement.conf'),
        '[placement_database]\nconnection = mysql+pymysql://placement:s3cret-my@controller/placement\n',
      )

      // In the foreground with the flag: placement.conf's MySQL is said to be unused, not refused.
      const d = await startForeground(['--db-url-file', secret, '--config-file', conf, '--auth', 'noauth2'], {PLACEMAT_HOME: h})
      try {
        expect(d.output()).toContain('[placement_database] connection (mysql+pymysql://placement:***@controller/placement) not used')
        expect(d.output()).toContain('(--db-url-file) names the database')
        expect((await fetch(`${d.url}/resource_providers`, {headers: {'x-auth-token': 'admin'}})).status).toBe(200)
        expect(d.output()).not.toMatch(/s3cret-(file|my)/)
      } finally {
        await d.stop()
      }

      // Detached, with the variable a container sets.
      const env = {PLACEMAT_HOME: h, PLACEMAT_DB_FILE: secret}
      const port = await freePort()
      const started = await placemat(['daemon', 'start', '--port', String(port)], {env})
      expect(started.code, started.stderr).toBe(0)
      try {
        expect(started.stdout + started.stderr).not.toContain('s3cret-file')
        const status = await placemat(['daemon', 'status', '--json'], {env})
        expect(JSON.parse(status.stdout)).toMatchObject({running: true, answering: true, url: `http://127.0.0.1:${port}`})
        expect(status.stdout).not.toContain('s3cret-file')
        expect(leftBehind(h)).not.toContain('s3cret-file')
      } finally {
        expect((await placemat(['daemon', 'stop'], {env})).code).toBe(0)
      }
    })
  })
})
