/**
 * A detached `daemon start` answers for the daemon it started, not for whatever answers at its
 * address: a child that cannot listen (another daemon holds the port) or cannot serve its database
 * (migrations pending) makes the start fail with the child's own last error line and exit code,
 * as the foreground start would. The detached daemon's log holds JSON lines only.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {placemat, ROOT} from '../helpers/cli.js'
import {freePort, until} from '../helpers/foreground-daemon.js'

const FIXTURE = path.join(ROOT, 'fixtures/db/schema-0001.db')

/** Each line of `file` that is not a JSON object (none for a log in pino's format). */
const notJson = (file: string) =>
  fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .filter((l) => {
      try {
        return typeof JSON.parse(l) !== 'object'
      } catch {
        return true
      }
    })

describe('a detached daemon start', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-detached-'))
  const other = path.join(dir, 'other.db')
  const mine = path.join(dir, 'mine.db')
  const served = path.join(dir, 'served.db')
  afterAll(async () => {
    for (const db of [other, mine, served]) await placemat(['daemon', 'stop', '--db', db])
    fs.rmSync(dir, {recursive: true, force: true})
  })

  it('fails when another daemon holds its port, saying so, and leaves no daemon behind', async () => {
    const port = String(await freePort())
    const first = await placemat(['daemon', 'start', '--db', other, '--port', port, '--auth', 'noauth2'])
    expect(first.code, first.stderr).toBe(0)
    const second = await placemat(['daemon', 'start', '--db', mine, '--port', port, '--auth', 'noauth2'])
    expect(second.stdout).toBe('')
    expect(second.code).toBe(1)
    expect(second.stderr).toMatch(new RegExp(`^placemat: cannot listen on 127\\.0\\.0\\.1:${port}: the address is in use`))
    expect((await placemat(['daemon', 'status', '--db', mine])).code).toBe(1)
    expect(fs.existsSync(path.join(dir, 'mine.pid'))).toBe(false)
    expect(notJson(path.join(dir, 'mine.log'))).toEqual([])
    // The daemon that held the port serves on.
    expect((await placemat(['daemon', 'status', '--db', other])).code).toBe(0)
  })

  it('on a database that needs migrations, exits 3 naming them, as the foreground start does', async () => {
    const old = path.join(dir, 'old.db')
    fs.copyFileSync(FIXTURE, old)
    const port = String(await freePort())
    const foreground = await placemat(['daemon', 'start', '--foreground', '--db', old, '--port', port, '--auth', 'noauth2'])
    expect(foreground.code).toBe(3)
    const detached = await placemat(['daemon', 'start', '--db', old, '--port', port, '--auth', 'noauth2'])
    expect(detached.code).toBe(3)
    expect(detached.stderr).toMatch(
      /^placemat: database .*old\.db has schema migrations pending \(0002_topology to .*\); run `placemat db upgrade/,
    )
    expect(fs.existsSync(path.join(dir, 'old.pid'))).toBe(false)
    expect(notJson(path.join(dir, 'old.log'))).toEqual([])
  })

  it("a failed reload is a JSON line of the daemon's log like every other", async () => {
    const policyFile = path.join(dir, 'policy.yaml')
    fs.writeFileSync(policyFile, '{}\n')
    const start = await placemat([
      'daemon',
      'start',
      '--db',
      served,
      '--port',
      String(await freePort()),
      '--auth',
      'noauth2',
      '--policy-file',
      policyFile,
    ])
    expect(start.code, start.stderr).toBe(0)
    const pid = JSON.parse(fs.readFileSync(path.join(dir, 'served.pid'), 'utf8')).pid as number
    fs.writeFileSync(policyFile, 'bad: [\n')
    process.kill(pid, 'SIGHUP')
    const log = path.join(dir, 'served.log')
    await until(() => fs.readFileSync(log, 'utf8').includes('policy not reloaded'), 'the reload in the log')
    expect(notJson(log)).toEqual([])
    const line = fs
      .readFileSync(log, 'utf8')
      .split('\n')
      .find((l) => l.includes('policy not reloaded'))!
    expect(JSON.parse(line)).toMatchObject({level: 50, event: 'reload', pid})
  })
})
