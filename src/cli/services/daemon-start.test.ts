/**
 * startDaemon's refusals, each made before anything listens or is started (no process, no
 * server): a missing database where one was, a drain with no time after its delay, Keystone
 * without its settings, a placement.conf that cannot be read; a policy file's unknown rule warned
 * of on the way.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {Parser} from '@oclif/core'
import {afterAll, describe, expect, it} from 'vitest'
import {daemonStartFlags} from '../daemon-start-flags.js'
import {exitCodeOf} from '../failure.js'
import {type DaemonStartContext, startDaemon} from './daemon-start.js'

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-daemon-start-'))
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

/**
 * `daemon start --foreground ARGS` as parsed, on a database file of its own in the test's folder
 * (in the foreground: were a refusal missed, nothing would be spawned).
 */
async function flagsOf(name: string, ...args: string[]) {
  const db = path.join(dir, name, 'placement.db')
  fs.mkdirSync(path.dirname(db), {recursive: true})
  return (await Parser.parse(['--foreground', '--port', '0', '--db', db, ...args], {flags: daemonStartFlags})).flags
}

function context(): DaemonStartContext & {warned: string[]} {
  const warned: string[] = []
  return {detached: false, dbGiven: true, argv: [], warn: (w) => warned.push(w), say: () => undefined, warned}
}

/** How startDaemon ends: its exit code and message. */
const refusal = (flags: Awaited<ReturnType<typeof flagsOf>>, ctx = context()) =>
  startDaemon(flags, ctx).then(
    () => 'started',
    (err) => `${exitCodeOf(err)} ${err.message}`,
  )

describe('daemon start', () => {
  it('will not start an empty database where the files beside it show one was (exit 1)', async () => {
    const flags = await flagsOf('lost')
    fs.writeFileSync(`${flags.db}-wal`, '')
    expect(await refusal(flags)).toBe(
      `1 ${flags.db} does not exist, but ${flags.db}-wal shows a database was there: not starting an empty one in its place. Restore the file, or run \`placemat db init --db ${flags.db}\` to begin a new database on purpose`,
    )
  })

  it('refuses a drain whose delay leaves no time before the timeout', async () => {
    expect(await refusal(await flagsOf('drain', '--shutdown-delay', '30', '--shutdown-timeout', '30'))).toBe(
      '1 --shutdown-delay (30 s) must be shorter than --shutdown-timeout (30 s): the drain needs time after it',
    )
  })

  it("refuses Keystone without [keystone_authtoken], after warning of a policy file's rule nobody has", async () => {
    const policy = path.join(dir, 'policy.yaml')
    fs.writeFileSync(policy, '"placement:resource_providers:lisst": "role:admin"\n')
    const ctx = context()
    expect(await refusal(await flagsOf('keystone', '--auth', 'keystone', '--policy-file', policy), ctx)).toBe(
      '1 --auth keystone needs [keystone_authtoken] (auth_url, username, password, project_name) in a --config-file',
    )
    expect(ctx.warned).toEqual([
      `${policy}: placement:resource_providers:lisst is not a rule of Placement's or placemat's (a typo?); it is kept for rule:placement:resource_providers:lisst`,
    ])
  })

  it('names a placement.conf it cannot read (exit 1)', async () => {
    const conf = path.join(dir, 'nowhere', 'placement.conf')
    expect(await refusal(await flagsOf('conf', '--config-file', conf))).toMatch(new RegExp(`^1 .*${conf.replace(/[.]/g, '\\.')}`))
  })
})
