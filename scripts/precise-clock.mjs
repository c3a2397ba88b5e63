// Wake-ups at sub-millisecond times, for the delay proxy. Node's timers fire at least 1 ms late
// (a 0.5 ms delay each way became +2.8 ms a round trip); a worker thread sleeping in
// Atomics.wait wakes within tens of microseconds, and then wakes the main thread by a message.
import {Worker} from 'node:worker_threads'

/** Milliseconds on the monotonic clock both threads share (performance.now() is per thread). */
export const nowMs = () => Number(process.hrtime.bigint()) / 1e6

const WORKER = `
const {workerData, parentPort} = require('node:worker_threads')
const slots = new Float64Array(workerData.due)
const bell = new Int32Array(workerData.bell)
const nowMs = () => Number(process.hrtime.bigint()) / 1e6
for (;;) {
  const seen = Atomics.load(bell, 0)
  const due = slots[0]
  if (due < 0) break
  if (due === 0) { Atomics.wait(bell, 0, seen); continue }
  const wait = due - nowMs()
  if (wait > 0) { Atomics.wait(bell, 0, seen, wait); continue }
  slots[0] = 0
  parentPort.postMessage(0)
}
`

export class PreciseClock {
  /** @param {() => void} onDue called on the main thread once the time asked by `wakeAt` has come */
  constructor(onDue) {
    this.due = new Float64Array(new SharedArrayBuffer(8))
    this.bellBuffer = new SharedArrayBuffer(4)
    this.bell = new Int32Array(this.bellBuffer)
    this.worker = new Worker(WORKER, {eval: true, workerData: {due: this.due.buffer, bell: this.bellBuffer}})
    this.worker.on('message', onDue)
    this.worker.unref()
  }

  /** Asks for one wake-up at `ms` (nowMs's clock), replacing the one asked before. */
  wakeAt(ms) {
    this.due[0] = Math.max(ms, 1e-9)
    Atomics.add(this.bell, 0, 1)
    Atomics.notify(this.bell, 0)
  }

  async close() {
    this.due[0] = -1
    Atomics.add(this.bell, 0, 1)
    Atomics.notify(this.bell, 0)
    await this.worker.terminate()
  }
}
