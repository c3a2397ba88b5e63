/**
 * Which Galera node a daemon's connections reach: after a balancer moves new connections to
 * another node (a failover, a failback), the ones on the old node are retired, never handed out
 * again; a balancer that spreads connections over several nodes retires none.
 */
import {describe, expect, it} from 'vitest'
import {GaleraNodes, QUIET_MS, SPREAD_CHANGES} from '../../src/store/galera-nodes.js'
import {MAX_RETIRED, poolWithout} from '../../src/store/mysql-connections.js'

function watch() {
  let now = 0
  const told: string[] = []
  const nodes = new GaleraNodes(
    {changed: (from, to) => told.push(`${from} -> ${to}`), spread: (list) => told.push(`spread ${list.join(' ')}`)},
    () => now,
  )
  return {nodes, told, at: (t: number) => (now = t)}
}

describe('the Galera node connections reach', () => {
  it('retires the connections on a node the newest connection no longer reaches, and says so once', () => {
    const {nodes, told, at} = watch()
    const [a1, a2, b1] = [{}, {}, {}]
    nodes.reached(a1, 'db1:3306')
    nodes.reached(a2, 'db1:3306')
    expect([nodes.retired(a1), nodes.retired(a2)]).toEqual([false, false])
    expect(told).toEqual([])
    at(60_000)
    nodes.reached(b1, 'db2:3306') // a failover: the balancer sends new connections to the backup
    expect([nodes.retired(a1), nodes.retired(a2), nodes.retired(b1)]).toEqual([true, true, false])
    expect(told).toEqual(['db1:3306 -> db2:3306'])
    at(300_000)
    nodes.seen('db1:3306') // the failback, seen by a connection opened only to ask
    expect([nodes.retired(a1), nodes.retired(b1)]).toEqual([false, true])
    expect(told).toEqual(['db1:3306 -> db2:3306', 'db2:3306 -> db1:3306'])
  })

  it('never retires a connection whose node is not known yet', () => {
    const {nodes} = watch()
    nodes.reached({}, 'db1:3306')
    nodes.seen('db2:3306')
    expect(nodes.retired({})).toBe(false)
  })

  it('retires none while connections are spread over several nodes, and again once one node held still', () => {
    const {nodes, told, at} = watch()
    const conns = Array.from({length: 8}, () => ({}))
    conns.forEach((c, i) => {
      at(i * 1000)
      nodes.reached(c, `db${(i % 3) + 1}:3306`) // round robin over three nodes
    })
    expect(told.filter((t) => t.startsWith('spread'))).toEqual(['spread db1:3306 db2:3306 db3:3306'])
    expect(told.filter((t) => !t.startsWith('spread'))).toHaveLength(SPREAD_CHANGES - 1)
    expect(conns.some((c) => nodes.retired(c))).toBe(false)
    at(7000 + QUIET_MS)
    expect(nodes.retired(conns[0])).toBe(true) // db1, while the newest reached db2
    expect(nodes.retired(conns[7])).toBe(false)
  })
})

describe("kysely's view of the pool", () => {
  it('closes the retired connections it is handed and takes the next, a bounded number of times', () => {
    const destroyed: number[] = []
    const made = (id: number) => ({id, destroy: () => destroyed.push(id)})
    let next = 0
    const pool = {getConnection: (cb: (err: unknown, c: unknown) => void) => cb(null, made(next++)), end: () => undefined}
    const retiredBelow = (n: number) => poolWithout(pool as never, (c) => (c as unknown as {id: number}).id < n)
    let got: unknown
    retiredBelow(3).getConnection((_err, c) => (got = c))
    expect((got as {id: number}).id).toBe(3)
    expect(destroyed).toEqual([0, 1, 2])
    retiredBelow(Number.POSITIVE_INFINITY).getConnection((_err, c) => (got = c))
    expect(destroyed).toHaveLength(3 + MAX_RETIRED)
  })
})
