/**
 * Several processes on one database follow each other's commits through the change journal:
 * whatever the sequence of writes (every kind, refused ones, ones that fail after changing the
 * State), after each one every process's State and candidates index equal a fresh load of the
 * database. Each Store below has its own connection, as a daemon or a `--db` command does; the
 * "CLI" one is opened again every few writes, as commands come and go.
 */
import {FULL_DEPTH} from '../helpers/depth.js'
import {describe, expect, it} from 'vitest'
import {followRun as run, newFile} from '../helpers/journal-follow.js'

describe('processes following one SQLite file', () => {
  it('a daemon and the command line: every State and index equal a fresh load after every write', async () => {
    const {failures, refusals} = await run(newFile(), ['daemon', 'cli'], FULL_DEPTH ? [1, 2, 3] : [1], 70)
    expect(failures).toBeGreaterThan(FULL_DEPTH ? 5 : 1)
    expect(refusals).toBeGreaterThan(FULL_DEPTH ? 3 : 0)
  }, 120_000)
})
