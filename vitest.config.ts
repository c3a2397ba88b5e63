import {defineConfig} from 'vitest/config'

/**
 * Four tiers, each a folder (a file's folder says its tier):
 *   unit      pure logic: the core, parsers, renderers, services against fakes; no build, no processes
 *   api       the HTTP app and the store in process, on temporary SQLite files; no build
 *   e2e       the built binary (`npm run build` first) and the daemons it starts
 *   external  real servers beside it: PostgreSQL, MariaDB, Keystone, Placement, haproxy, podman, ...
 * `npm test` runs unit and api; `npm run test:all` runs every tier (see docs/contributing.md).
 */
const tier = (name: string, include: string[], timeout: number) => ({
  extends: true as const,
  test: {name, include, testTimeout: timeout, hookTimeout: timeout},
})

export default defineConfig({
  test: {
    pool: 'forks',
    // Daemons the tests start skip the start-up rehearsal (warm-up.ts): hundreds of them would
    // each spend a second of CPU on it; test/e2e/daemon-warm-up.test.ts turns it back on.
    env: {PLACEMAT_WARM_UP: '0'},
    // Generous: a test fails on what it asserts, never on a busy machine being slow (hangs still end).
    projects: [
      tier('unit', ['test/unit/**/*.test.ts', 'src/**/*.test.ts'], 60000),
      tier('api', ['test/api/**/*.test.ts'], 120000),
      tier('e2e', ['test/e2e/**/*.test.ts'], 180000),
      tier('external', ['test/external/**/*.test.ts'], 180000),
    ],
  },
})
