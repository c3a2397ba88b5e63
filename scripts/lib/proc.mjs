// Processes as /proc shows them, for the benchmarks that read CPU and memory from it.
//
// statFields: the fields of /proc/PID/stat after the command's closing parenthesis, so field k of
// proc(5) is at index k - 3 (state 0, ppid 1, utime 11, stime 12, cutime 13, cstime 14).
import fs from 'node:fs'

/** Clock ticks a second (USER_HZ), the unit of the CPU times in stat. */
export const CLOCK_TICKS = 100

/** The fields of /proc/PID/stat after the command; null where the process is gone. */
export function statFields(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  } catch {
    return null
  }
}

/** A size field of /proc/PID/status (VmRSS, VmHWM) in MiB; null where the process is gone. */
export const statusMiB = (pid, field) => {
  try {
    return Math.round(Number(fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`${field}:\\s+(\\d+)`))[1]) / 1024)
  } catch {
    return null
  }
}

/** CPU seconds (user + system) a process has used so far; null where it is gone. */
export const cpuSeconds = (pid) => {
  const f = statFields(pid)
  return f ? (Number(f[11]) + Number(f[12])) / CLOCK_TICKS : null
}

/**
 * A process and its descendants (PostgreSQL's postmaster and its backends, a uwsgi master and
 * its workers; a placemat daemon alone).
 */
export function processTree(root) {
  const children = new Map()
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    const f = statFields(d)
    if (!f) continue
    const ppid = Number(f[1])
    if (!children.has(ppid)) children.set(ppid, [])
    children.get(ppid).push(Number(d))
  }
  const pids = [root]
  for (let i = 0; i < pids.length; i++) pids.push(...(children.get(pids[i]) ?? []))
  return pids
}

/** SIGKILL to a child this process started and to its own children (uwsgi's workers outlive a killed master). */
export function killTree(child) {
  for (const pid of processTree(child.pid)) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {}
  }
}

/** VmRSS in MiB of a process and its descendants. */
export const rssTree = (pid) => processTree(pid).reduce((a, p) => a + (statusMiB(p, 'VmRSS') ?? 0), 0)
