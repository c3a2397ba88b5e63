// What the fault run started, so that it is stopped on the way out, whatever the way; its work
// directory; what the daemons and the report share (the fault under way, notes); the progress
// lines on stderr; commands run to their end without blocking the event loop (the load keeps going).
import {execFileSync, spawn} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {ROOT} from '../lib/daemon.mjs'
import {cleanUpOnExit} from '../lib/exit.mjs'
import {asPostgres, pgCtlSync} from '../lib/postgres.mjs'

const t0Run = performance.now()
export const now = () => performance.now()
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const stamp = () => ((now() - t0Run) / 1000).toFixed(1).padStart(6)
export const progress = (msg) => process.stderr.write(`[faults ${stamp()}s] ${msg}\n`)

/** Everything started here: daemons and commands, clusters, mounts, directories, proxies, frozen processes. */
export const live = {children: new Set(), clusters: new Set(), mounts: [], dirs: [], proxies: new Set(), frozen: new Set(), work: null}

/** The fault under way (null between faults), daemons' exits outside any, the report's notes on the whole run. */
export const state = {phase: null, setupExits: [], notes: []}

function cleanupSync() {
  for (const pid of live.frozen) {
    try {
      process.kill(pid, 'SIGCONT')
    } catch {}
  }
  for (const child of live.children) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill('SIGKILL')
      } catch {}
    }
  }
  for (const proxy of live.proxies) {
    try {
      proxy.cutAll()
      proxy.server.close()
    } catch {}
  }
  for (const c of live.clusters) {
    if (!fs.existsSync(path.join(c.data, 'postmaster.pid'))) continue
    try {
      pgCtlSync(c, ['-m', 'immediate', '-w', '-t', '30', 'stop'])
    } catch (err) {
      process.stderr.write(`fault-run: stopping PostgreSQL in ${c.data}: ${err.message.slice(0, 300)}\n`)
    }
  }
  for (const m of live.mounts.splice(0).reverse()) {
    try {
      execFileSync('umount', [m], {stdio: 'pipe'})
    } catch {
      try {
        execFileSync('umount', ['-l', m], {stdio: 'pipe'})
      } catch (err) {
        process.stderr.write(`fault-run: umount ${m}: ${String(err.stderr ?? err.message).trim()}\n`)
      }
    }
  }
  for (const dir of live.dirs) fs.rmSync(dir, {recursive: true, force: true})
}

let stop = () => {}

/** Makes the work directory, and sees that all started from now on is stopped on the way out. */
export function openWork() {
  stop = cleanUpOnExit(cleanupSync, (sig) => progress(`${sig}: stopping every daemon, PostgreSQL cluster and mount`))
  live.work = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-fault-run-'))
  live.dirs.push(live.work)
  // The clusters' directories are inside: the postgres user must get through.
  fs.chmodSync(live.work, 0o755)
  return live.work
}

/** Stops everything still running and removes what was made (once: the way out finds nothing left). */
export const stopEverything = () => stop()

/** Runs a command to its end without blocking the event loop (the load keeps going). */
export function run(cmd, args, {asPostgres: postgresUser = false, timeoutMs = 120000, env} = {}) {
  const [file, argv] = postgresUser ? asPostgres(cmd, args) : [cmd, args]
  return new Promise((resolve) => {
    const child = spawn(file, argv, {stdio: ['ignore', 'pipe', 'pipe'], env: env ?? process.env, cwd: ROOT})
    live.children.add(child)
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (out += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('error', (err) => {
      clearTimeout(timer)
      live.children.delete(child)
      resolve({code: -1, out: String(err.message)})
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      live.children.delete(child)
      resolve({code: code ?? (signal ? `signal ${signal}` : -1), out})
    })
  })
}

export async function must(cmd, args, opts) {
  const r = await run(cmd, args, opts)
  if (r.code !== 0) throw new Error(`${path.basename(cmd)} ${args.join(' ')} failed (${r.code}): ${r.out.trim().slice(-800)}`)
  return r.out
}
