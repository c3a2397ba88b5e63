import {describe, expect, it} from 'vitest'
import {reflow} from '../../src/cli/help.js'

describe('help text', () => {
  it('joins the hand-wrapped lines of a paragraph, keeps lists, indented lines and blank lines', () => {
    const text =
      'One sentence that was\nwrapped by hand.\n\nA list:\n  --a  first\n  --b  second\n- item one\n- item two\nNext paragraph\ncontinues.'
    expect(reflow(text)).toBe(
      'One sentence that was wrapped by hand.\n\nA list:\n  --a  first\n  --b  second\n- item one\n- item two\nNext paragraph continues.',
    )
  })
})
