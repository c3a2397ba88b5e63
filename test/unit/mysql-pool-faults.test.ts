/**
 * kysely's pooled MariaDB connections: one that met a fault of the database's (a Galera node out of
 * the primary component, 1047) is closed when released, never handed out again; one that met a
 * refusal of a statement's own goes back to the pool.
 */
import {describe, expect, it} from 'vitest'
import {closeWhenDone} from '../../src/store/mysql-connections.js'

const notPrimary = Object.assign(new Error('WSREP has not yet prepared node for application use'), {
  errno: 1047,
  code: 'ER_UNKNOWN_COM_ERROR',
  sqlState: '08S01',
})
const duplicate = Object.assign(new Error("Duplicate entry 'x' for key 'PRIMARY'"), {errno: 1062, code: 'ER_DUP_ENTRY', sqlState: '23000'})

function fakeConnection(answer: unknown) {
  const ended: string[] = []
  const conn = {
    query: (_sql: string, _values: unknown, done: (err: unknown, rows?: unknown) => void) => done(answer, answer ? undefined : []),
    release: () => ended.push('released'),
    destroy: () => ended.push('destroyed'),
  }
  closeWhenDone(conn as never)
  return {conn, ended}
}

describe("kysely's pooled connections on MariaDB", () => {
  it('closes one that met a fault of the database, and keeps one that met a refusal or nothing', () => {
    for (const [answer, end] of [
      [notPrimary, 'destroyed'],
      [duplicate, 'released'],
      [null, 'released'],
    ] as const) {
      const {conn, ended} = fakeConnection(answer)
      let told: unknown
      conn.query('select 1', [], (err: unknown) => {
        told = err
      })
      expect(told).toBe(answer ?? null)
      conn.release()
      expect(ended).toEqual([end])
    }
  })
})
