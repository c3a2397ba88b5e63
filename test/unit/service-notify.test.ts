import {describe, expect, it} from 'vitest'
import {notifyAddress, serviceNotifier, watchdogIntervalMs} from '../../src/daemon/service-notify.js'
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

  it('outside systemd it does nothing', () => {
    expect(() => serviceNotifier({}).ready('serving')).not.toThrow()
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
