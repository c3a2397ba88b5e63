/**
 * How the command line finds its daemon and says why it could not: the daemon of its own data
 * directory only (never another listening on the usual port), and a 401 that says which token was
 * refused, or that none was sent.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {placemat} from '../helpers/cli.js'
import {freePort} from '../helpers/ports.js'

describe('reaching the daemon', () => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-reach-'))
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-reach-empty-'))
  const db = path.join(home, 'placemat.db')
  let url = ''
  beforeAll(async () => {
    const port = await freePort()
    url = `http://127.0.0.1:${port}`
    const started = await placemat(['daemon', 'start', '--db', db, '--port', String(port)])
    expect(started.code, started.stderr).toBe(0)
  })
  afterAll(async () => {
    await placemat(['daemon', 'stop', '--db', db])
    fs.rmSync(home, {recursive: true, force: true})
    fs.rmSync(empty, {recursive: true, force: true})
  })

  it('finds the daemon of PLACEMAT_HOME by its record, and none in a data directory without one (exit 5)', async () => {
    const ours = await placemat(['provider', 'list'], {env: {PLACEMAT_HOME: home}})
    expect(ours.code, ours.stderr).toBe(0)
    const none = await placemat(['provider', 'list'], {env: {PLACEMAT_HOME: empty}})
    expect(none.code).toBe(5)
    expect(none.stderr).toBe(
      `placemat: no daemon serves ${path.join(empty, 'placemat.db')} (no pid record in ${empty}); ` +
        'start one with `placemat daemon start`, give its address with --url, or work on a file with --db FILE\n',
    )
  })

  it('a 401 says whether no token was sent, or which one was refused (exit 10)', async () => {
    const none = await placemat(['provider', 'list', '--url', url])
    expect(none.code).toBe(10)
    expect(none.stderr).toMatch(/^placemat: 401.*; no token was sent: give --token, PLACEMAT_TOKEN or OS_TOKEN, or log in through Keystone/)
    const wrong = await placemat(['provider', 'list', '--url', url, '--token', 'not-the-token-at-all'])
    expect(wrong.code).toBe(10)
    expect(wrong.stderr).toMatch(/; the token from --token was refused\n$/)
    const env = await placemat(['provider', 'list', '--url', url], {env: {PLACEMAT_TOKEN: 'not-the-token-at-all'}})
    expect(env.stderr).toMatch(/; the token from PLACEMAT_TOKEN was refused\n$/)
    // The daemon keeps the token it read at start; the file gone, the command line has none to send.
    const tokenFile = path.join(home, 'admin-token')
    const token = fs.readFileSync(tokenFile, 'utf8')
    fs.rmSync(tokenFile)
    try {
      const missing = await placemat(['provider', 'list'], {env: {PLACEMAT_HOME: home}})
      expect(missing.code).toBe(10)
      expect(missing.stderr).toMatch(new RegExp(`; no token was sent: the daemon's admin token file ${tokenFile} is missing or unreadable`))
    } finally {
      fs.writeFileSync(tokenFile, token, {mode: 0o600})
    }
  })

  it('a Keystone that does not answer is named, without advice to start a daemon (exit 5)', async () => {
    const port = await freePort()
    const r = await placemat(['provider', 'list'], {
      env: {
        OS_AUTH_URL: `http://127.0.0.1:${port}/v3`,
        OS_USERNAME: 'admin',
        OS_PASSWORD: 'pw',
        OS_PROJECT_NAME: 'admin',
        OS_USER_DOMAIN_NAME: 'Default',
        OS_PROJECT_DOMAIN_NAME: 'Default',
        PLACEMAT_HOME: empty,
      },
    })
    expect(r.code).toBe(5)
    expect(r.stderr).toMatch(new RegExp(`^placemat: cannot reach Keystone at http://127.0.0.1:${port}/v3`))
    expect(r.stderr).not.toContain('daemon start')
  })
})
