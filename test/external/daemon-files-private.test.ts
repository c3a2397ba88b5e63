/**
 * What a daemon leaves on disk is its owner's alone: a new SQLite database (and its -wal and
 * -shm) and the directory made for it, the pid record and the log are owner-only; a PostgreSQL
 * URL's password is neither in the pid record nor on the detached daemon's command line.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {placemat} from '../helpers/cli.js'
import {freePort} from '../helpers/ports.js'
import {postgresAvailable, startPostgres, type TestPostgres} from '../helpers/postgres.js'

const mode = (file: string) => (fs.statSync(file).mode & 0o777).toString(8)
const walk = (d: string): string[] =>
  fs.readdirSync(d, {withFileTypes: true}).flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]))

describe('a daemon keeps its files to its owner', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-private-'))
  afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

  it('SQLite: the database, its -wal and -shm, the directory made for it, the pid record and the log are owner-only', async () => {
    const db = path.join(dir, 'made', 'cloud.db')
    const init = await placemat(['db', 'init', '--db', db])
    expect(init.code, init.stderr).toBe(0)
    expect([mode(path.dirname(db)), mode(db)]).toEqual(['700', '600'])
    const port = await freePort()
    const started = await placemat(['daemon', 'start', '--db', db, '--port', String(port)])
    expect(started.code, started.stderr).toBe(0)
    try {
      for (const f of ['cloud.db', 'cloud.db-wal', 'cloud.db-shm', 'cloud.pid', 'cloud.log', 'admin-token']) {
        expect([f, mode(path.join(path.dirname(db), f))]).toEqual([f, '600'])
      }
    } finally {
      expect((await placemat(['daemon', 'stop', '--db', db])).code).toBe(0)
    }
  })

  describe.skipIf(!postgresAvailable)('PostgreSQL', () => {
    let server: TestPostgres
    beforeAll(async () => {
      server = await startPostgres()
    }, 60000)
    afterAll(() => server?.stop())

    it("the URL's password is in neither the pid record nor the daemon's command line, and the daemon serves", async () => {
      // The throwaway server trusts local connections: any password is accepted, and must still be kept.
      const url = (await server.database()).replace('://postgres@', '://postgres:s3cret-word@')
      const home = path.join(dir, 'pg-home')
      const env = {PLACEMAT_HOME: home}
      expect((await placemat(['db', 'init', '--db', url], {env})).code).toBe(0)
      const port = await freePort()
      const started = await placemat(['daemon', 'start', '--db', url, '--port', String(port)], {env})
      expect(started.code, started.stderr).toBe(0)
      try {
        expect(started.stdout).not.toContain('s3cret-word')
        const records = fs.readdirSync(home).filter((f) => f.endsWith('.pid'))
        expect(records).toHaveLength(1)
        const record = path.join(home, records[0])
        expect(mode(record)).toBe('600')
        const text = fs.readFileSync(record, 'utf8')
        expect(text).not.toContain('s3cret-word')
        const {pid} = JSON.parse(text)
        if (fs.existsSync(`/proc/${pid}/cmdline`)) expect(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8')).not.toContain('s3cret-word')
        const status = await placemat(['daemon', 'status', '--db', url, '--json'], {env})
        expect(JSON.parse(status.stdout)).toMatchObject({running: true, url: `http://127.0.0.1:${port}`})
        expect(status.stdout).not.toContain('s3cret-word')
        const res = await fetch(`http://127.0.0.1:${port}/`)
        expect(res.status).toBe(200)
        // A few requests for the log, a refused one among them.
        expect((await fetch(`http://127.0.0.1:${port}/resource_providers`)).status).toBe(401)
      } finally {
        expect((await placemat(['daemon', 'stop', '--db', url], {env})).code).toBe(0)
      }
      // Every file the daemon wrote: owner-only, and none holds the password (the log included).
      const written = walk(home)
      expect(written.some((f) => f.endsWith('.log'))).toBe(true)
      console.log(written.map((f) => `${mode(f)} ${fs.statSync(f).size} ${path.relative(home, f)}`).join('\n'))
      for (const f of written) {
        expect([path.relative(home, f), mode(f)]).toEqual([path.relative(home, f), '600'])
        expect(fs.readFileSync(f).includes('s3cret-word'), f).toBe(false)
      }
    })
  })
})
