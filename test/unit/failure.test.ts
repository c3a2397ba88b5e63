/** How a command ends for each kind of error: the user's mistakes by their exit codes, a bug told apart. */
import {describe, expect, it} from 'vitest'
import {ApiError} from '../../src/client/client.js'
import {ExitCode, failureReport, usageError} from '../../src/cli/failure.js'

describe('failureReport', () => {
  it("keeps the user's mistakes and the endpoint's answers as they were", () => {
    expect(failureReport(usageError('--limit must be a number'), {})).toEqual({message: '--limit must be a number', exit: ExitCode.USAGE})
    expect(failureReport(new ApiError(409, 'generation conflict', 'placement.concurrent_update', 'PUT', '/x'), {})).toEqual({
      message: '409 [placement.concurrent_update]: generation conflict',
      exit: ExitCode.CONFLICT,
    })
    const missing = Object.assign(new Error("ENOENT: no such file or directory, open 'cloud.yaml'"), {code: 'ENOENT'})
    expect(failureReport(missing, {})?.exit).toBe(ExitCode.ERROR)
  })

  it('says a bug is a bug (exit 70), and where it happened only when asked', () => {
    let bug: unknown
    try {
      ;(undefined as unknown as {hosts: string[]}).hosts.length
    } catch (err) {
      bug = err
    }
    const quiet = failureReport(bug, {})!
    expect(quiet.exit).toBe(70)
    expect(quiet.message).toMatch(/^a bug in placemat, please report it: TypeError: .*hosts.* \(PLACEMAT_DEBUG=1 shows where\)$/)
    const loud = failureReport(bug, {PLACEMAT_DEBUG: '1'})!
    expect(loud.message.split('\n').length).toBeGreaterThan(2)
    expect(loud.message).toContain('failure.test.ts')
  })
})
