/**
 * The shipped systemd unit: `systemd-analyze verify` finds nothing to say, its drain fits in
 * TimeoutStopSec, and its own ExecStart (paths moved to a temporary directory) reaches READY=1
 * and STOPPING=1 on a stand-in for systemd's notify socket. systemd is not PID 1 here.
 */
import {execFileSync, spawnSync} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {DgramSocket} from 'node-unix-socket'
import {afterAll, describe, expect, it} from 'vitest'
import {BIN, ROOT} from '../helpers/cli.js'
import {startForeground, until} from '../helpers/foreground-daemon.js'

const UNIT = path.join(ROOT, 'deploy', 'systemd', 'placemat.service')
const analyze = spawnSync('systemd-analyze', ['--version']).status === 0
if (!analyze) console.warn('systemd-unit.test.ts: no systemd-analyze here (apt-get install systemd): skipped')

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-unit-'))
afterAll(() => {
  fs.rmSync(dir, {recursive: true, force: true})
})

/** The unit's [Service] settings (continuation lines joined). */
function serviceSettings(text: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const line of text.replace(/\\\n\s*/g, ' ').split('\n')) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line.trim())
    if (m) out.set(m[1], m[2])
  }
  return out
}

const execStart = (settings: Map<string, string>) => settings.get('ExecStart')!.split(/\s+/)
const flagValue = (args: string[], flag: string) => Number(args[args.indexOf(flag) + 1])

describe('the systemd unit', () => {
  const text = fs.readFileSync(UNIT, 'utf8')
  const settings = serviceSettings(text)

  it.skipIf(!analyze)('passes systemd-analyze verify without a word about itself, whatever other units of the machine say', () => {
    // The executable where the unit expects it is this checkout's.
    const copy = path.join(dir, 'placemat.service')
    fs.writeFileSync(copy, text.replace('/usr/local/bin/placemat', BIN))
    // Another unit it is ordered after, with something to say of its own (as Debian's may).
    const others = path.join(dir, 'other-units')
    fs.mkdirSync(others, {recursive: true})
    fs.writeFileSync(
      path.join(others, 'postgresql.service'),
      '[Unit]\nAfter=keystone.service\nUnknownKeyOfAnotherUnit=1\n[Service]\nExecStart=/bin/true\n',
    )
    for (const env of [{}, {SYSTEMD_UNIT_PATH: `${others}:`}]) {
      const r = spawnSync('systemd-analyze', ['verify', copy], {encoding: 'utf8', cwd: dir, env: {...process.env, ...env}})
      const own = (r.stdout + r.stderr).split('\n').filter((l) => l.includes('placemat.service'))
      expect({status: r.status, own}).toEqual({status: 0, own: []})
    }
  })

  it('is a notify service of its own user, restarted on failure, sandboxed, and gives the drain its time', () => {
    expect(
      Object.fromEntries(
        [
          'Type',
          'NotifyAccess',
          'User',
          'StateDirectory',
          'StateDirectoryMode',
          'Restart',
          'ExecReload',
          'NoNewPrivileges',
          'ProtectSystem',
        ].map((k) => [k, settings.get(k)]),
      ),
    ).toEqual({
      Type: 'notify',
      NotifyAccess: 'main',
      User: 'placemat',
      StateDirectory: 'placemat',
      StateDirectoryMode: '0700',
      Restart: 'on-failure',
      ExecReload: '/bin/kill -HUP $MAINPID',
      NoNewPrivileges: 'yes',
      ProtectSystem: 'strict',
    })
    const args = execStart(settings)
    const timeout = flagValue(args, '--shutdown-timeout')
    expect(timeout).toBeGreaterThan(flagValue(args, '--shutdown-delay'))
    expect(Number(settings.get('TimeoutStopSec'))).toBeGreaterThan(timeout)
    expect(settings.has('WatchdogSec')).toBe(true)
    // V8 writes the code it runs: MemoryDenyWriteExecute would kill it.
    expect(settings.has('MemoryDenyWriteExecute')).toBe(false)
  })

  it('serves with its own ExecStart: READY=1 to the notify socket, STOPPING=1 and exit 0 on SIGTERM', async () => {
    const args = execStart(settings)
    expect(args.slice(0, 4)).toEqual(['/usr/local/bin/placemat', 'daemon', 'start', '--foreground'])
    const conf = path.join(dir, 'placement.conf')
    fs.copyFileSync(path.join(ROOT, 'deploy', 'systemd', 'placement.conf'), conf)
    // Its flags, with this test's paths and port (startForeground adds --foreground and --port).
    const own = args.slice(4)
    own[own.indexOf('--config-file') + 1] = conf
    own.splice(own.indexOf('--port'), 2)
    const socket = path.join(dir, 'notify.sock')
    const messages: string[] = []
    const listener = new DgramSocket()
    listener.on('data', (b: Buffer) => messages.push(b.toString()))
    listener.bind(socket)
    try {
      const d = await startForeground(own, {NOTIFY_SOCKET: socket, PLACEMAT_HOME: path.join(dir, 'state'), WATCHDOG_USEC: '30000000'})
      await until(() => messages.some((m) => m.startsWith('READY=1')), 'READY=1')
      // The database is the data directory's: PLACEMAT_HOME, as the unit sets it.
      expect(fs.existsSync(path.join(dir, 'state', 'placemat.db'))).toBe(true)
      expect(messages).toContain('WATCHDOG=1')
      d.child.kill('SIGTERM')
      expect(await d.exited).toBe(0)
      expect(messages.some((m) => m.startsWith('STOPPING=1'))).toBe(true)
    } finally {
      listener.close()
    }
  })

  it('the sysusers entry names the user the unit runs as', () => {
    const sysusers = fs.readFileSync(path.join(ROOT, 'deploy', 'systemd', 'placemat.sysusers'), 'utf8')
    expect(sysusers).toMatch(/^u placemat - /m)
    expect(execFileSync(process.execPath, [BIN, 'daemon', 'start', '--help'], {encoding: 'utf8'})).toContain('--shutdown-timeout')
  })
})
