// A process's /proc/PID/stat, for the benchmarks that read CPU from it (bench-scaleout,
// scaleout-fixed-load): the fields after the command's closing parenthesis, so field k of
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
