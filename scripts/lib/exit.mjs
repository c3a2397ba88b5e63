// Stopping what a script started on the way out, whatever the way: its end, a crash, or a signal.

/**
 * Runs `cleanup` (synchronous) once: on exit, or on SIGINT, SIGTERM or SIGHUP after `onSignal(sig)`
 * (the process then exits 130). Returns the cleanup, to run sooner; it runs once all the same.
 */
export function cleanUpOnExit(cleanup, onSignal) {
  let done = false
  const once = () => {
    if (done) return
    done = true
    cleanup()
  }
  process.on('exit', once)
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(sig, () => {
      onSignal(sig)
      once()
      process.exit(130)
    })
  }
  return once
}
