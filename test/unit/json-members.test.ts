/**
 * The incremental JSON reader: the members and streamed elements it gives are what
 * JSON.parse gives, however the bytes are cut into chunks; malformed documents are refused.
 */
import {describe, expect, it} from 'vitest'
import {JsonMemberScanner, JsonStreamError, jsonMembers, type JsonMember} from '../../src/cli/formats/json-members.js'

/** Every member of `text` read in chunks of `size` bytes. */
function scan(text: string, streamed: string[], size = 1 << 20): JsonMember[] {
  const bytes = Buffer.from(text, 'utf8')
  const scanner = new JsonMemberScanner(new Set(streamed))
  const out: JsonMember[] = []
  for (let i = 0; i < bytes.length; i += size) out.push(...scanner.push(bytes.subarray(i, i + size)))
  scanner.end()
  return out
}

/** The document put back together from its members. */
function rebuild(members: JsonMember[]): Record<string, unknown> {
  const doc: Record<string, unknown> = {}
  for (const m of members) {
    if ('element' in m) ((doc[m.key] ??= []) as unknown[]).push(m.element)
    else doc[m.key] = m.value
  }
  return doc
}

const DOC = {
  placemat_snapshot: 1,
  'odd "key", with {brackets}': {nested: ['a', {b: '}]'}], escaped: 'quote \\" backslash \\\\ end'},
  providers: [{uuid: 'u1', name: 'ünïcødé ☃ 𝄞', list: [1, [2, [3]], {}], s: '\\', t: '[,]{:}'}, 'a string element', 42, null, [], {}],
  empty: [],
  consumers: [],
  number: -1.5e3,
}

describe('the incremental JSON reader', () => {
  const text = JSON.stringify(DOC, null, 2)

  it('gives what JSON.parse gives, cut anywhere (every chunk size from one byte)', () => {
    for (const size of [1, 2, 3, 7, 64, 1 << 20]) {
      const members = scan(text, ['providers', 'consumers', 'empty'], size)
      const doc = rebuild(members)
      // Streamed arrays with no elements give no member: the reader's caller treats them as absent.
      expect({...doc, empty: [], consumers: []}).toEqual(DOC)
      expect(members.filter((m) => 'element' in m).map((m) => (m as {index: number}).index)).toEqual([0, 1, 2, 3, 4, 5])
    }
  })

  it('gives arrays that are not streamed whole, and compact JSON as well as indented', () => {
    const members = scan(JSON.stringify(DOC), [])
    expect(members.every((m) => 'value' in m)).toBe(true)
    expect(rebuild(members)).toEqual(DOC)
  })

  it('skips a byte order mark', () => {
    expect(rebuild(scan('\ufeff{"a": [1]}', ['a']))).toEqual({a: [1]})
  })

  it('reads from an async source', async () => {
    async function* chunks() {
      const bytes = Buffer.from(text)
      for (let i = 0; i < bytes.length; i += 5) yield bytes.subarray(i, i + 5)
    }
    const members: JsonMember[] = []
    for await (const m of jsonMembers(chunks(), ['providers'])) members.push(m)
    expect(rebuild(members)).toMatchObject({providers: DOC.providers, number: -1.5e3})
  })

  const refused: Array<[string, string, RegExp]> = [
    ['an array at the top', '[1, 2]', /not an object/],
    ['nothing', '  \n', /empty/],
    ['a bad element', '{"providers": [{"a": 1}, {"a": tru}]}', /providers\[1\]:/],
    ['a bad value', '{"a": {"b": }}', /^a:/],
    ['a missing colon', '{"a" 1}', /expected ':'/],
    ['a trailing comma in the object', '{"a": 1,}', /expected a member name/],
    ['a trailing comma in a streamed array', '{"p": [1,]}', /p\[1\]/],
    ['text after the end', '{"a": 1} x', /nothing after the closing brace/],
    ['a cut document', '{"providers": [{"a": 1}', /unexpected end/],
    ['a mismatched bracket', '{"p": [1}', /expected ',' or '\]'/],
    ['a key twice', '{"a": 1, "a": 2}', /"a" appears twice/],
  ]
  for (const [what, doc, message] of refused) {
    it(`refuses ${what}`, () => {
      for (const size of [1, 1 << 20]) {
        let err: unknown
        try {
          scan(doc, ['providers', 'p'], size)
        } catch (e) {
          err = e
        }
        expect(err).toBeInstanceOf(JsonStreamError)
        expect((err as Error).message).toMatch(message)
      }
    })
  }

  it('says the line and column of what is wrong, however the file came in chunks', () => {
    const cases: Array<[string, number, number]> = [
      ['{\n  "providers": [\n    {"name": "a"},\n    {"name": "x",}\n  ]\n}', 4, 18],
      ['{\n  "a": 1\n  "b": 2\n}', 3, 3],
      // JSON.parse says no position for some faults: the value's start, then.
      ['{"a": {"b": \n\n   }}', 1, 7],
    ]
    for (const [doc, line, column] of cases)
      for (const size of [1, 3, 7, 1 << 20]) {
        let err: JsonStreamError | undefined
        try {
          scan(doc, ['providers'], size)
        } catch (e) {
          err = e as JsonStreamError
        }
        expect([err?.line, err?.column], `${JSON.stringify(doc)} in chunks of ${size}: ${err?.message}`).toEqual([line, column])
      }
  })
})
