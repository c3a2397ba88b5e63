import {defineConfig} from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    // Generous: a test fails on what it asserts, never on a busy machine being slow (hangs still end).
    testTimeout: 180000,
    hookTimeout: 180000,
    pool: 'forks',
  },
})
