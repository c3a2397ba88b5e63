/**
 * Node's memory tuning, in one place.
 */

/**
 * Node options the daemon runs with (`placemat daemon start` passes them; `npm start` and the
 * `placemat` executable's #! line say the same).
 * A young generation of up to 64 MiB per semi-space: loading a million providers creates
 * millions of short-lived row values, and with Node's default (16 MiB) most of the start-up
 * went to scavenging them (17 s against 11 s at 1M providers on the 2-core reference machine).
 */
export const DAEMON_NODE_OPTIONS = ['--max-semi-space-size=64']

/**
 * For a command that holds a whole cloud in process (`--db`) and then ends: the heap may grow
 * to 1.3 times what was live at the last full collection, not the two to four times V8 allows
 * a fast-allocating program. Applying a million providers offline then peaks at 1.5 GB
 * instead of 2.3 GB, for some 10% more time; a daemon keeps V8's default, which favours
 * its latency.
 */
export function keepHeapNearLive(): void {
  // node:v8 at its use: every command imports this file (the daemon's options), few call this.
  process.getBuiltinModule('node:v8').setFlagsFromString('--heap-growing-percent=30')
}

/**
 * Test-only hook, read by the entry points (daemon, --db commands) and given to the store: with
 * PLACEMAT_TEST_PAUSE_IN_TX=MS set, a write that changed something waits MS milliseconds after its
 * rows are written and before COMMIT, saying so on stderr, so a test can kill the process there.
 */
export function testPauseInTransaction(): (() => Promise<void>) | undefined {
  const ms = Number(process.env.PLACEMAT_TEST_PAUSE_IN_TX) || 0
  if (!ms) return undefined
  return async () => {
    process.stderr.write('placemat-test: paused in transaction\n')
    await new Promise((r) => setTimeout(r, ms))
  }
}
