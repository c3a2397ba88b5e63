/**
 * How hard the generated and very large tests push: a quick pass by default (`npm test`, run after
 * every change), all of it with PLACEMAT_TEST_DEPTH=full (`npm run test:all` and CI). The quick pass
 * runs the same checks on fewer seeds and smaller bodies.
 */
export const FULL_DEPTH = process.env.PLACEMAT_TEST_DEPTH === 'full'

/** `full` in the whole run, `quick` by default. */
export const depth = <T = number>(full: T, quick: T): T => (FULL_DEPTH ? full : quick)
