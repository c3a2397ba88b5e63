import {afterEach, describe, expect, it} from 'vitest'
import {youngGenerationHint} from '../../src/daemon/node-flags.js'

const saved = process.env.NODE_OPTIONS
afterEach(() => {
  if (saved === undefined) delete process.env.NODE_OPTIONS
  else process.env.NODE_OPTIONS = saved
})

// The #! line gives no V8 flag; a process that loads a large cloud without the daemon's young
// generation says how to start it.
describe('the young generation hint', () => {
  it('is said for a large load without --max-semi-space-size, and only then', () => {
    process.env.NODE_OPTIONS = ''
    const given = process.execArgv.some((o) => o.startsWith('--max-semi-space-size'))
    expect(youngGenerationHint(1000)).toBeNull()
    if (!given) expect(youngGenerationHint(1_000_000)).toMatch(/^1000000 providers loaded .*--max-semi-space-size=64/)
    process.env.NODE_OPTIONS = '--enable-source-maps --max-semi-space-size=64'
    expect(youngGenerationHint(1_000_000)).toBeNull()
  })
})
