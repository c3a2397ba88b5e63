import {describe, expect, it} from 'vitest'
import {answeredByServer, asDatabaseError, DatabaseUnavailableError, databaseFault, describeCause} from './database-faults.js'

/** An error as mysql2 gives a server's: its number, its ER_ code and SQLSTATE. */
const mysqlError = (errno: number, code: string, sqlState = 'HY000') => Object.assign(new Error(code), {errno, code, sqlState})

describe('a database error, read as what it means for the caller', () => {
  it("reads MariaDB's errors by number: a lost race, a timeout, a node out of its cluster, read-only, full", () => {
    expect(databaseFault(mysqlError(1213, 'ER_LOCK_DEADLOCK', '40001'))).toBe('contended')
    expect(databaseFault(mysqlError(1205, 'ER_LOCK_WAIT_TIMEOUT'))).toBe('timeout')
    expect(databaseFault(mysqlError(1969, 'ER_STATEMENT_TIMEOUT', '70100'))).toBe('timeout')
    expect(databaseFault(mysqlError(1047, 'ER_UNKNOWN_COM_ERROR', '08S01'))).toBe('unavailable')
    expect(databaseFault(mysqlError(1290, 'ER_OPTION_PREVENTS_STATEMENT'))).toBe('read-only')
    expect(databaseFault(mysqlError(1114, 'ER_RECORD_FILE_FULL'))).toBe('out-of-space')
    // A Galera node rejoining refuses streaming replication's settings for a new connection.
    const notGalera4 = Object.assign(mysqlError(1231, 'ER_WRONG_VALUE_FOR_VAR', '42000'), {
      message: "Variable 'wsrep_trx_fragment_size' can't be set to the value of '67108864'",
    })
    expect(databaseFault(notGalera4)).toBe('unavailable')
    expect(databaseFault(mysqlError(1231, 'ER_WRONG_VALUE_FOR_VAR', '42000'))).toBeNull()
  })

  it("reads mysql2's own codes for a lost connection and a call that had no answer in time", () => {
    expect(databaseFault(Object.assign(new Error('Connection lost'), {code: 'PROTOCOL_CONNECTION_LOST', fatal: true}))).toBe('unavailable')
    expect(databaseFault(Object.assign(new Error('Query inactivity timeout'), {code: 'PROTOCOL_SEQUENCE_TIMEOUT'}))).toBe('timeout')
    expect(databaseFault(Object.assign(new Error('connect ECONNREFUSED'), {code: 'ECONNREFUSED', errno: -111}))).toBe('unavailable')
  })

  it('leaves a refusal that is not the database failing to the caller (a bug of the statement, never a 503)', () => {
    expect(databaseFault(mysqlError(1064, 'ER_PARSE_ERROR', '42000'))).toBeNull()
    expect(databaseFault(mysqlError(1062, 'ER_DUP_ENTRY', '23000'))).toBeNull()
    const contended = asDatabaseError(mysqlError(1213, 'ER_LOCK_DEADLOCK', '40001'))
    expect(contended).toBeInstanceOf(DatabaseUnavailableError)
    expect((contended as DatabaseUnavailableError).status).toBe(503)
  })

  it("tells a COMMIT a Galera node failed (the server's answer) from a lost connection, and glosses MariaDB's 'fragment'", () => {
    const failed = Object.assign(
      new Error('Error while appending streaming replication fragment(provider status: Not connected to Primary Component)'),
      {errno: 1180, code: 'ER_ERROR_DURING_COMMIT', sqlState: 'HY000'},
    )
    expect(databaseFault(failed)).toBe('unavailable')
    expect(answeredByServer(failed)).toBe(true)
    expect(answeredByServer(Object.assign(new Error('Connection lost'), {code: 'PROTOCOL_CONNECTION_LOST', fatal: true}))).toBe(false)
    expect(describeCause(failed)).toMatch(/fragment.*\[MariaDB says "fragment" of any COMMIT .*replicates whole\]$/)
  })
})
