import fs from 'node:fs'
import {createRequire} from 'node:module'
import os from 'node:os'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {NOOP, notifyAddress, serviceNotifier, watchdogIntervalMs} from '../../src/daemon/service-notify.js'
import {describeReload, reloadFailed} from '../../src/daemon/lifecycle.js'

describe("systemd's notify protocol", () => {
  it('reads NOTIFY_SOCKET as a path or an abstract name, nothing else', () => {
    expect(notifyAddress('/run/systemd/notify')).toBe('/run/systemd/notify')
    expect(notifyAddress('@/org/freedesktop/systemd1/notify/1')).toBe('\0/org/freedesktop/systemd1/notify/1')
    expect(notifyAddress(undefined)).toBe(undefined)
    expect(notifyAddress('relative/path')).toBe(undefined)
  })

  it('pings at half of WATCHDOG_USEC, only for the process WATCHDOG_PID names', () => {
    expect(watchdogIntervalMs({WATCHDOG_USEC: '30000000'}, 42)).toBe(15000)
    expect(watchdogIntervalMs({WATCHDOG_USEC: '30000000', WATCHDOG_PID: '42'}, 42)).toBe(15000)
    expect(watchdogIntervalMs({WATCHDOG_USEC: '30000000', WATCHDOG_PID: '41'}, 42)).toBe(undefined)
    expect(watchdogIntervalMs({}, 42)).toBe(undefined)
    expect(watchdogIntervalMs({WATCHDOG_USEC: 'x'}, 42)).toBe(undefined)
  })

  it('sends one-line statuses (a newline would start another assignment)', () => {
    const sent: string[] = []
    const n = serviceNotifier({}, {send: (m) => sent.push(m), close() {}})
    n.status('waiting\nfor the database')
    n.stopping('stopping on SIGTERM')
    n.ready('serving')
    expect(sent[0]).toBe('STATUS=waiting for the database')
    expect(sent[1]).toBe('STOPPING=1\nSTATUS=stopping on SIGTERM')
    expect(sent[2]).toMatch(/^READY=1\nSTATUS=serving\nMAINPID=\d+$/)
  })

  it('sends to the socket NOTIFY_SOCKET names; outside systemd it opens none and sends nothing', async () => {
    const {DgramSocket} = createRequire(import.meta.url)('node-unix-socket') as typeof import('node-unix-socket')
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-notify-'))
    const socketPath = path.join(dir, 'notify')
    const systemd = new DgramSocket()
    const got: string[] = []
    systemd.on('data', (buf: Buffer) => got.push(buf.toString()))
    systemd.bind(socketPath)
    try {
      const errors: Error[] = []
      const n = serviceNotifier({NOTIFY_SOCKET: socketPath}, undefined, (e) => errors.push(e))
      n.ready('serving')
      n.close()
      for (let i = 0; i < 200 && got.length === 0; i++) await new Promise((r) => setTimeout(r, 10))
      expect(errors).toEqual([])
      expect(got).toHaveLength(1)
      expect(got[0]).toMatch(/^READY=1\nSTATUS=serving\nMAINPID=\d+$/)
      expect(serviceNotifier({})).toBe(NOOP)
      expect(serviceNotifier({NOTIFY_SOCKET: 'relative/path'})).toBe(NOOP)
    } finally {
      systemd.close()
      fs.rmSync(dir, {recursive: true, force: true})
    }
  })
})

describe('a reload report', () => {
  it('says what changed and what was kept', () => {
    const ok = {
      policy: {changed: ['placement:resource_providers:list']},
      logLevel: {from: 'info' as const, to: 'debug' as const},
      tls: {changed: true},
    }
    expect(describeReload(ok)).toBe(
      'policy: 1 rule(s) changed (placement:resource_providers:list); log level info -> debug; TLS certificate replaced',
    )
    expect(reloadFailed(ok)).toBe(false)
    const bad = {policy: {error: 'policy file /etc/p.yaml: bad'}, tls: {error: 'tls.key: no key'}}
    expect(describeReload(bad)).toBe(
      'policy not reloaded (policy file /etc/p.yaml: bad); the rules in force stay; TLS certificate not reloaded (tls.key: no key); the one in use stays',
    )
    expect(reloadFailed(bad)).toBe(true)
  })
})
