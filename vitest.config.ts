import {defineConfig} from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    // Generous: a test fails on what it asserts, never on a busy machine being slow (hangs still end).
    testTimeout: 180000,
    hookTimeout: 180000,
    pool: 'forks',
    // Daemons the tests start skip the start-up rehearsal (warm-up.ts): hundreds of them would
    // each spend a second of CPU on it; test/e2e/daemon-warm-up.test.ts turns it back on.
    env: {PLACEMAT_WARM_UP: '0'},
  },
})
