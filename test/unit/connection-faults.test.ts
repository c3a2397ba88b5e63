/**
 * A server database's faults and reconnects as the daemon is told of them: the reconnect when a
 * call is answered again, not when a connection opens (a Galera node out of the primary
 * component takes connections and refuses every query: "answering again" thirty times a second).
 */
import {describe, expect, it} from 'vitest'
import type {BackendObserver} from '../../src/store/backends.js'
import {ConnectionFaults} from '../../src/store/connection-faults.js'

const lostConnection = Object.assign(new Error('read ECONNRESET'), {code: 'ECONNRESET'})

describe('connection faults', () => {
  it('tells of a reconnect once, when a call is answered after a connection was lost', () => {
    const told: string[] = []
    const observer = {fault: (kind: string) => told.push(`fault ${kind}`), reconnect: () => told.push('reconnect')} as BackendObserver
    const faults = new ConnectionFaults(() => observer)
    faults.answered()
    expect(told).toEqual([])
    // A node that takes connections and refuses queries: faults, and no reconnect between them.
    for (let k = 0; k < 3; k++) faults.fault(lostConnection)
    expect(told).toEqual(['fault unavailable', 'fault unavailable', 'fault unavailable'])
    faults.answered()
    faults.answered()
    expect(told.slice(3)).toEqual(['reconnect'])
  })
})
