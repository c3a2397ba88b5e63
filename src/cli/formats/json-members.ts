/**
 * A JSON document whose top level is an object, read incrementally: each member comes as it
 * is read, and the members named `streamed` whose value is an array come one element at a
 * time. Only the bytes of the element being read are held, so a file far larger than a
 * string can be (a cloud of a million providers) is read in bounded memory. Each element
 * and each other member value is parsed with JSON.parse, which checks it fully; the
 * structure around them (braces, keys, commas) is checked here.
 */

/** A member whose value came whole, or one element of a streamed array. */
export type JsonMember = {key: string; value: unknown} | {key: string; index: number; element: unknown}

/** The document is not JSON, or not an object at its top level (`notAnObject`); where, when known (from 1). */
export class JsonStreamError extends Error {
  constructor(
    message: string,
    readonly notAnObject = false,
    readonly line?: number,
    readonly column?: number,
  ) {
    super(message)
    this.name = 'JsonStreamError'
  }
}

enum At {
  Start,
  KeyOrEnd,
  Key,
  KeyString,
  Colon,
  Value,
  ElementOrEnd,
  Element,
  Capture,
  AfterMember,
  End,
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const COLON = 0x3a
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d

const isSpace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09

/**
 * The scanner: fed chunks of bytes, it returns the members completed in each. Structural
 * bytes are ASCII, which never occurs inside a multi-byte UTF-8 sequence, so bytes are
 * scanned as they come and decoded only when a value is parsed.
 */
export class JsonMemberScanner {
  private at = At.Start
  /** Bytes before the current chunk, for messages. */
  private offset = 0
  /** The line the current chunk starts on, and its column there (from 1), for messages. */
  private line = 1
  private column = 1
  /** Where the member name or value being read starts. */
  private startLine = 1
  private startColumn = 1
  private key = ''
  private readonly keys = new Set<string>()
  private index = 0
  /** Inside a captured value: nesting, and whether in a string (and just after a backslash). */
  private depth = 0
  private inString = false
  private escaped = false
  /** Where the captured value ends: a member value (',' or '}') or an array element (',' or ']'). */
  private captureIsElement = false
  /** The captured value's bytes from earlier chunks. */
  private pieces: Buffer[] = []
  private first = true

  constructor(private readonly streamed: ReadonlySet<string>) {}

  push(chunk: Buffer): JsonMember[] {
    const out: JsonMember[] = []
    let i = 0
    const n = chunk.length
    let start = 0
    if (this.first && n > 0) {
      this.first = false
      if (n >= 3 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) i = 3 // a byte order mark
    }
    while (i < n) {
      switch (this.at) {
        case At.Start: {
          const b = chunk[i++]
          if (isSpace(b)) continue
          if (b !== OPEN_BRACE) throw new JsonStreamError('the top level is not an object', true)
          this.at = At.KeyOrEnd
          continue
        }
        case At.KeyOrEnd:
        case At.Key: {
          const b = chunk[i++]
          if (isSpace(b)) continue
          if (b === CLOSE_BRACE && this.at === At.KeyOrEnd) {
            this.at = At.End
            continue
          }
          if (b !== QUOTE) throw this.unexpected(chunk, b, i - 1, 'a member name (a string)')
          this.at = At.KeyString
          start = i - 1
          this.markStart(chunk, start)
          this.escaped = false
          // The chunk may end with the opening quote: keep it for the key's text.
          if (i === n) this.pieces.push(chunk.subarray(start))
          continue
        }
        case At.KeyString: {
          const end = this.stringEnd(chunk, i)
          if (end < 0) {
            this.pieces.push(chunk.subarray(start))
            i = n
            continue
          }
          this.key = this.parse(this.take(chunk, start, end + 1), 'a member name') as string
          if (this.keys.has(this.key)) throw new JsonStreamError(`member "${this.key}" appears twice`)
          this.keys.add(this.key)
          i = end + 1
          this.at = At.Colon
          continue
        }
        case At.Colon: {
          const b = chunk[i++]
          if (isSpace(b)) continue
          if (b !== COLON) throw this.unexpected(chunk, b, i - 1, "':'")
          this.at = At.Value
          continue
        }
        case At.Value: {
          const b = chunk[i]
          if (isSpace(b)) {
            i++
            continue
          }
          if (b === OPEN_BRACKET && this.streamed.has(this.key)) {
            i++
            this.at = At.ElementOrEnd
            this.index = 0
            continue
          }
          start = i
          this.markStart(chunk, start)
          this.beginCapture(false)
          continue
        }
        case At.ElementOrEnd:
        case At.Element: {
          const b = chunk[i]
          if (isSpace(b)) {
            i++
            continue
          }
          if (b === CLOSE_BRACKET && this.at === At.ElementOrEnd) {
            i++
            this.at = At.AfterMember
            continue
          }
          start = i
          this.markStart(chunk, start)
          this.beginCapture(true)
          continue
        }
        case At.Capture: {
          const end = this.captureEnd(chunk, i)
          if (end < 0) {
            this.pieces.push(chunk.subarray(start))
            i = n
            continue
          }
          const text = this.take(chunk, start, end)
          const closing = chunk[end]
          i = end + 1
          if (this.captureIsElement) {
            out.push({key: this.key, index: this.index, element: this.parse(text, `${this.key}[${this.index}]`)})
            this.index++
            this.at = closing === COMMA ? At.Element : At.AfterMember
          } else {
            out.push({key: this.key, value: this.parse(text, this.key)})
            this.at = closing === COMMA ? At.Key : At.End
          }
          continue
        }
        case At.AfterMember: {
          const b = chunk[i++]
          if (isSpace(b)) continue
          if (b === COMMA) this.at = At.Key
          else if (b === CLOSE_BRACE) this.at = At.End
          else throw this.unexpected(chunk, b, i - 1, "',' or '}'")
          continue
        }
        case At.End: {
          const b = chunk[i++]
          if (!isSpace(b)) throw this.unexpected(chunk, b, i - 1, 'nothing after the closing brace')
          continue
        }
      }
    }
    this.offset += n
    ;[this.line, this.column] = this.lineAt(chunk, n)
    return out
  }

  /** The line and column of byte `i` of `chunk` (counted from the chunk's start). */
  private lineAt(chunk: Buffer, i: number): [number, number] {
    let line = this.line
    let column = this.column
    let from = 0
    for (let nl = chunk.indexOf(0x0a, 0); nl >= 0 && nl < i; nl = chunk.indexOf(0x0a, nl + 1)) {
      line++
      from = nl + 1
      column = 1
    }
    return [line, column + (i - from)]
  }

  private markStart(chunk: Buffer, i: number): void {
    ;[this.startLine, this.startColumn] = this.lineAt(chunk, i)
  }

  /** Checks that the document ended where it may. */
  end(): void {
    if (this.at === At.Start) throw new JsonStreamError('the document is empty', true)
    if (this.at !== At.End) throw new JsonStreamError(`unexpected end of the document after byte ${this.offset}`)
  }

  private beginCapture(element: boolean): void {
    this.at = At.Capture
    this.captureIsElement = element
    this.depth = 0
    this.inString = false
    this.escaped = false
  }

  /** The index of the unescaped '"' closing a string that starts before `from`, or -1. */
  private stringEnd(chunk: Buffer, from: number): number {
    for (let i = from; i < chunk.length; i++) {
      const b = chunk[i]
      if (this.escaped) this.escaped = false
      else if (b === BACKSLASH) this.escaped = true
      else if (b === QUOTE) return i
    }
    return -1
  }

  /** The index of the ',' or closing bracket that ends the captured value, or -1. */
  private captureEnd(chunk: Buffer, from: number): number {
    let depth = this.depth
    let inString = this.inString
    let escaped = this.escaped
    const closer = this.captureIsElement ? CLOSE_BRACKET : CLOSE_BRACE
    const n = chunk.length
    for (let i = from; i < n; i++) {
      const b = chunk[i]
      if (inString) {
        if (escaped) escaped = false
        else if (b === BACKSLASH) escaped = true
        else if (b === QUOTE) inString = false
      } else if (b === QUOTE) inString = true
      else if (b === OPEN_BRACE || b === OPEN_BRACKET) depth++
      else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
        if (depth === 0) {
          if (b !== closer) throw this.unexpected(chunk, b, i, this.captureIsElement ? "',' or ']'" : "',' or '}'")
          return i
        }
        depth--
      } else if (b === COMMA && depth === 0) return i
    }
    this.depth = depth
    this.inString = inString
    this.escaped = escaped
    return -1
  }

  /** The text of the value from `start` to `end` in this chunk, with its bytes from earlier chunks. */
  private take(chunk: Buffer, start: number, end: number): string {
    const last = chunk.subarray(start, end)
    if (!this.pieces.length) return last.toString('utf8')
    const text = Buffer.concat([...this.pieces, last]).toString('utf8')
    this.pieces = []
    return text
  }

  private parse(text: string, where: string): unknown {
    try {
      return JSON.parse(text)
    } catch (err) {
      // JSON.parse says where in the value (a character's position): where is that in the file.
      const message = (err as Error).message
      const at = /at position (\d+)/.exec(message)
      let line = this.startLine
      let column = this.startColumn
      if (at) {
        const before = text.slice(0, Number(at[1]))
        const nl = before.lastIndexOf('\n')
        line += before.split('\n').length - 1
        column = nl < 0 ? column + before.length : before.length - nl
      }
      throw new JsonStreamError(`${where}: ${message.replace(/ in JSON at position \d+.*$/, '')}`, false, line, column)
    }
  }

  private unexpected(chunk: Buffer, b: number, i: number, expected: string): JsonStreamError {
    const shown = b >= 0x20 && b < 0x7f ? `'${String.fromCharCode(b)}'` : `byte 0x${b.toString(16)}`
    const [line, column] = this.lineAt(chunk, i)
    return new JsonStreamError(`unexpected ${shown}; expected ${expected}`, false, line, column)
  }
}

/** The members of a JSON object read from `chunks`, arrays of the `streamed` members element by element. */
export async function* jsonMembers(chunks: AsyncIterable<Buffer>, streamed: Iterable<string>): AsyncGenerator<JsonMember> {
  const scanner = new JsonMemberScanner(new Set(streamed))
  for await (const chunk of chunks) yield* scanner.push(chunk)
  scanner.end()
}
