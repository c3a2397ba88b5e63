/**
 * Node's memory tuning, in one place.
 */

/**
 * Node options the daemon runs with (`placemat daemon start` passes them; `npm start`, the
 * image's entry point and the systemd unit's NODE_OPTIONS say the same).
 * A young generation of up to 64 MiB per semi-space: loading a million providers creates
 * millions of short-lived row values, and with Node's default (16 MiB) most of the start-up
 * went to scavenging them (17 s against 11 s at 1M providers on the 2-core reference machine).
 * Not on the `placemat` executable's #! line: with any V8 flag given at start, V8 refuses the
 * code cache Node's own modules come with, and compiles those a command loads (some 8 ms of
 * `--version`, 13 ms of `provider list`).
 */
export const DAEMON_NODE_OPTIONS = ['--max-semi-space-size=64']

/** From how many providers a load without DAEMON_NODE_OPTIONS says so. */
const LARGE_LOAD = 200_000

/**
 * What to say when a process loaded a large cloud without DAEMON_NODE_OPTIONS (a daemon run
 * under another supervisor with `--foreground`, a `--db` command on a large file); null otherwise.
 */
export function youngGenerationHint(providers: number): string | null {
  if (providers < LARGE_LOAD) return null
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)]
  if (given.some((o) => o.startsWith('--max-semi-space-size'))) return null
  return `${providers} providers loaded with Node's default young generation: start node with ${DAEMON_NODE_OPTIONS.join(' ')} (NODE_OPTIONS=${DAEMON_NODE_OPTIONS.join(' ')}), as placemat daemon start does: a million load in two thirds of the time`
}

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
