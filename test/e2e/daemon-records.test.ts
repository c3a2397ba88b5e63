/**
 * One daemon per database, even with several databases in one directory: each has its own
 * record, `status`/`stop` act on the one named, and a second daemon on the same file is refused.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {placemat} from '../helpers/cli.js'
import {freePort} from '../helpers/ports.js'

describe('daemon records per database', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-records-'))
  const big = path.join(dir, 'big.db')
  const copy = path.join(dir, 'copy.db')
  afterAll(async () => {
    await placemat(['daemon', 'stop', '--db', big])
    await placemat(['daemon', 'stop', '--db', copy])
    fs.rmSync(dir, {recursive: true, force: true})
  })

  it('two databases in one directory get two daemons; status and stop act on the one named', async () => {
    const [p1, p2] = [await freePort(), await freePort()]
    const a = await placemat(['daemon', 'start', '--db', big, '--port', String(p1)])
    expect(a.code, a.stderr).toBe(0)
    expect((await placemat(['daemon', 'status', '--db', copy])).code).toBe(1)
    const b = await placemat(['daemon', 'start', '--db', copy, '--port', String(p2)])
    expect(b.code, b.stderr).toBe(0)
    expect(fs.existsSync(path.join(dir, 'big.pid')) && fs.existsSync(path.join(dir, 'copy.pid'))).toBe(true)

    const statusCopy = JSON.parse((await placemat(['daemon', 'status', '--db', copy, '--json'])).stdout)
    expect(statusCopy).toMatchObject({running: true, url: `http://127.0.0.1:${p2}`})
    expect((await placemat(['daemon', 'stop', '--db', copy])).code).toBe(0)
    expect((await placemat(['daemon', 'status', '--db', copy])).code).toBe(1)
    const statusBig = JSON.parse((await placemat(['daemon', 'status', '--db', big, '--json'])).stdout)
    expect(statusBig).toMatchObject({running: true, answering: true, url: `http://127.0.0.1:${p1}`})
  })

  it('a second daemon on the same database is refused, in the foreground too, and the record stays the first one', async () => {
    const before = fs.readFileSync(path.join(dir, 'big.pid'), 'utf8')
    for (const extra of [[], ['--foreground']]) {
      const again = await placemat(['daemon', 'start', '--db', big, '--port', String(await freePort()), ...extra])
      expect(again.code).toBe(1)
      expect(again.stderr).toMatch(/^placemat: a daemon already serves .*big\.db/)
    }
    expect(fs.readFileSync(path.join(dir, 'big.pid'), 'utf8')).toBe(before)
  })
})
