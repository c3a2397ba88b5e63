// What bench-scaleout started (daemons and uwsgi nodes, the PostgreSQL cluster, the delay proxy,
// directories), so that it is stopped on the way out, whatever the way; and the progress lines.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {cleanUpOnExit} from '../lib/exit.mjs'
import {killTree} from '../lib/proc.mjs'

export const progress = (msg) => process.stderr.write(`[scaleout ${new Date().toISOString().slice(11, 19)}] ${msg}\n`)
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/**
 * Children to stop; the cluster's stop (pgStop), its postmaster and the URL its transactions are
 * counted at (statsUrl); MariaDB's servers (their pids, and their stop); the delay proxy's pid;
 * directories to remove.
 */
export const running = {
  children: new Set(),
  pgStop: null,
  statsUrl: null,
  postmaster: null,
  mariadbPids: null,
  mariadbStop: null,
  proxyPid: null,
  dirs: [],
}

/** Synchronous last-resort cleanup: on exit, a signal or a crash. */
function cleanupNow() {
  for (const child of running.children) {
    if (child.exitCode === null && child.signalCode === null) killTree(child)
  }
  if (running.pgStop) {
    try {
      running.pgStop('immediate')
    } catch (err) {
      process.stderr.write(`bench-scaleout: stopping PostgreSQL: ${err.message}\n`)
    }
  }
  for (const pid of running.mariadbPids?.() ?? []) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // gone already
    }
  }
  for (const dir of running.dirs) fs.rmSync(dir, {recursive: true, force: true})
}

let stop = () => {}

/** Sees that all started from now on is stopped on the way out; makes the work directory. */
export function openWork() {
  stop = cleanUpOnExit(cleanupNow, (sig) => progress(`${sig}: stopping the daemons and PostgreSQL`))
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-scaleout-'))
  running.dirs.push(work)
  return work
}

/** Stops everything still running and removes what was made (once). */
export const stopEverything = () => stop()
