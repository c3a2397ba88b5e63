import {createRequire} from 'node:module'
import {Worker} from 'node:worker_threads'

/**
 * Copies the WAL back into the database file from a worker thread with its own connection, so
 * that a write request never pays for a checkpoint (and its fsync) on the event loop. PASSIVE
 * checkpoints never wait on readers or writers. The serving connection keeps a high
 * auto-checkpoint threshold as a safety net in case this thread falls behind.
 */
const WORKER_SOURCE = `
const {workerData, parentPort} = require('node:worker_threads')
const Database = require(workerData.driver)
const db = new Database(workerData.file, {fileMustExist: true})
db.pragma('busy_timeout = 50')
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)')
  } catch {
    // busy or locked: the next round catches up
  }
}, workerData.intervalMs)
parentPort.once('message', () => {
  clearInterval(timer)
  db.close()
  parentPort.close()
})
`

export class BackgroundCheckpointer {
  private readonly worker: Worker

  constructor(file: string, intervalMs = 250) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3')
    this.worker = new Worker(WORKER_SOURCE, {eval: true, workerData: {file, driver, intervalMs}})
    this.worker.on('error', () => undefined) // the auto-checkpoint safety net takes over
    this.worker.unref()
  }

  /** Closes the worker's connection (so the last connection to close can clean the WAL up). */
  async stop(): Promise<void> {
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()))
    this.worker.postMessage('stop')
    const timeout = setTimeout(() => void this.worker.terminate(), 2000)
    await exited
    clearTimeout(timeout)
  }
}
