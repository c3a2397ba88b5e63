/**
 * The roff the man pages are written in (scripts/lib/roff.mjs): text escaped so that it prints as
 * written (backslashes, hyphens, quotes, characters outside ASCII), no text line taken for a
 * control line, and the help's layout (paragraphs, `- ` and `1. ` lists, indented blocks) kept.
 * test/e2e/man-pages.test.ts renders the built pages with groff.
 */
import {describe, expect, it} from 'vitest'
// @ts-expect-error: a script of the repository, without types
import {esc, example, macro, prose} from '../../scripts/lib/roff.mjs'

describe('roff for the man pages', () => {
  it('escapes backslashes, hyphens, quotes and what is not ASCII', () => {
    expect(esc('C:\\dir --db -f x')).toBe('C:\\edir \\-\\-db \\-f x')
    expect(esc("it's `code`")).toBe('it\\(aqs \\(gacode\\(ga')
    expect(esc('groups’ rules — x ☃')).toBe('groups\\(cq rules \\(em x \\[u2603]')
  })

  it('never starts a text line with a control character', () => {
    const lines: string[] = [...prose(".hidden\n'quoted\n  .indented\n- .item"), ...example('.dot\nok')]
    for (const line of lines) if (/^[.']/.test(line)) expect(line, line).toMatch(/^\.(PP|IP|nf|fi|RS|RE|PD)( |$)/)
    expect(lines).toContain('\\&.hidden')
    expect(lines).toContain('\\(aqquoted')
    expect(lines).toContain('\\&.dot')
  })

  it('keeps paragraphs, lists and indented blocks', () => {
    expect(prose('One line\nand the next.\n\n- a\n- b\n  more of b\nafter\n\n  kept  as is\n  here')).toEqual([
      '.PP',
      'One line',
      'and the next.',
      '.PP',
      '.IP \\(bu 2',
      'a',
      '.PD 0',
      '.IP \\(bu 2',
      'b',
      'more of b',
      '.PD',
      '.PP',
      'after',
      '.PP',
      '.nf',
      '  kept  as is',
      '  here',
      '.fi',
    ])
    expect(prose('1. first\n   goes on')).toEqual(['.PP', '.IP 1. 3', 'first', 'goes on'])
    expect(prose('run `placemat db upgrade` now')).toEqual(['.PP', 'run \\fB\\%placemat db upgrade\\fR now'])
  })

  it('quotes macro arguments with spaces, and empty ones', () => {
    expect(macro('TH', 'X', '1', '', 'placemat 1.0')).toBe('.TH X 1 "" "placemat 1.0"')
  })
})
