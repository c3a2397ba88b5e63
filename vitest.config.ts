import {defineConfig} from 'vitest/config'

/**
 * Four tiers, each a folder (a file's folder says its tier):
 *   unit      pure logic: the core, parsers, renderers, services against fakes; no build, no processes
 *   api       the HTTP app and the store in process, on temporary SQLite files; no build
 *   e2e       the built binary (`npm run build` first) and the daemons it starts
 *   external  real servers beside it: PostgreSQL, MariaDB, Keystone, Placement, haproxy, podman, ...
 * `npm test` runs unit and api; `npm run test:all` runs every tier (see docs/contributing.md).
 */
const tier = (name: string, include: string[], timeout: number, extra: {isolate?: boolean} = {}) => ({
  extends: true as const,
  test: {name, include, testTimeout: timeout, hookTimeout: timeout, ...extra},
})

export default defineConfig({
  test: {
    pool: 'forks',
    // npm test at its default depth on two workers (this machine's two cores: 108 s instead of
    // 195 s). At full depth (CI) one: a generated test holding a worker for long left vitest's own
    // calls to the other timing out (onTaskUpdate). test:e2e and test:external ask for one.
    maxWorkers: process.env.PLACEMAT_TEST_DEPTH === 'full' ? 1 : 2,
    // Daemons the tests start skip the start-up rehearsal (warm-up.ts): hundreds of them would
    // each spend a second of CPU on it; test/e2e/daemon-warm-up.test.ts turns it back on.
    env: {PLACEMAT_WARM_UP: '0'},
    // Generous: a test fails on what it asserts, never on a busy machine being slow (hangs still end).
    projects: [
      // Pure tests that leave no global behind share their workers' modules instead of loading
      // them again for each of their 89 files.
      tier('unit', ['test/unit/**/*.test.ts', 'src/**/*.test.ts'], 60000, {isolate: false}),
      tier('api', ['test/api/**/*.test.ts'], 120000),
      tier('e2e', ['test/e2e/**/*.test.ts'], 180000),
      tier('external', ['test/external/**/*.test.ts'], 180000),
    ],
  },
})
