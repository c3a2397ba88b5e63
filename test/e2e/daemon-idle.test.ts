import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {startForeground} from '../helpers/foreground-daemon.js'

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-idle-'))
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

/** How often the process's main thread has gone to sleep so far (it wakes as often). */
const sleeps = (pid: number) => Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1])

// Every node of a cluster pays for what its daemon does with nothing to serve. A busy machine
// makes a sleeping process wait longer to run, never wake more often.
describe.runIf(process.platform === 'linux')('an idle daemon', () => {
  it('wakes its event loop a few times a second, not a hundred', async () => {
    const d = await startForeground(['--db', path.join(dir, 'p.db'), '--auth', 'noauth2', '--no-warm-up'])
    const pid = d.child.pid!
    await new Promise((r) => setTimeout(r, 1000))
    const before = sleeps(pid)
    const t0 = performance.now()
    await new Promise((r) => setTimeout(r, 3000))
    const perSecond = (sleeps(pid) - before) / ((performance.now() - t0) / 1000)
    await d.stop()
    // The event loop's lag sampled every 100 ms, and its timers of a second: about 12; prom-client's
    // default sampling (every 10 ms) alone made it 100.
    expect(perSecond).toBeLessThan(40)
  })
})
