/**
 * A file the command line reads as a document, YAML or JSON ("-" for standard input): read whole,
 * or opened so that a big JSON file comes member by member (json-members.ts).
 */
import fs from 'node:fs'
import YAML from 'yaml'
import {usageError} from '../failure.js'
import {jsonMembers, JsonStreamError, type JsonMember} from './json-members.js'

const usage = usageError

export interface ReadOptions {
  /** The error to throw (default: a usage error, exit 2). */
  fail?: (message: string) => Error
  /** Parse text that looks like JSON with JSON.parse (much faster on big files). */
  jsonFastPath?: boolean
  yaml?: YAML.ParseOptions & YAML.DocumentOptions & YAML.SchemaOptions & YAML.ToJSOptions
}

/**
 * All of standard input. A pipe whose writer is slow can be non-blocking, and then a plain
 * read fails with EAGAIN before the data comes: wait a little and read again until the end.
 */
export function readStdin(): string {
  const chunks: Buffer[] = []
  const buf = Buffer.alloc(1 << 16)
  const pause = new Int32Array(new SharedArrayBuffer(4))
  for (;;) {
    let n: number
    try {
      n = fs.readSync(0, buf, 0, buf.length, null)
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      if (code === 'EAGAIN' || code === 'EWOULDBLOCK') {
        Atomics.wait(pause, 0, 0, 5)
        continue
      }
      if (code === 'EOF') break
      throw err
    }
    if (n === 0) break
    chunks.push(Buffer.from(buf.subarray(0, n)))
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** The text of a file, or of standard input for "-". */
export function readText(file: string, fail: (message: string) => Error = usage): string {
  try {
    return file === '-' ? readStdin() : fs.readFileSync(file, 'utf8')
  } catch (err) {
    throw fail(`cannot read ${file}: ${(err as Error).message}`)
  }
}

/** A parser's message with the lines it points at (YAML shows them under "line N, column M:"), kept short. */
function parseProblem(err: Error): string {
  const [first, ...rest] = err.message.split('\n')
  const snippet = rest.filter((l) => l.trim() !== '').slice(0, 4)
  return snippet.length ? `${first}\n${snippet.map((l) => `  ${l}`).join('\n')}` : first
}

/** A YAML or JSON document (JSON is YAML) from a file or "-"; unreadable or malformed input fails. */
export function readDocument(file: string, opts: ReadOptions = {}): unknown {
  const fail = opts.fail ?? usage
  const text = readText(file, fail)
  try {
    return opts.jsonFastPath && /^\s*[{[]/.test(text) ? JSON.parse(text) : YAML.parse(text, opts.yaml)
  } catch (err) {
    throw fail(`${file}: not valid YAML or JSON: ${parseProblem(err as Error)}`)
  }
}

/**
 * A document opened for reading in pieces: JSON (a file named *.json, or whose first
 * character is '{' or '[') is read incrementally, its top-level object member by member and
 * the `streamed` arrays element by element; anything else is YAML, parsed whole (YAML is
 * for files people write: big ones should be JSON).
 */
export type OpenedDocument = {kind: 'json'; members: AsyncGenerator<JsonMember>} | {kind: 'yaml'; data: unknown}

export interface OpenOptions {
  /** The error to throw (default: a usage error, exit 2). */
  fail?: (message: string) => Error
  /** The members of the top-level object whose array values come element by element. */
  streamed: Iterable<string>
  /** What is wrong when the top level is not a mapping. */
  notAMapping: string
  yaml?: ReadOptions['yaml']
}

const CHUNK_BYTES = 1 << 20

/** The bytes of a file, or of standard input for "-", in chunks. */
function byteChunks(file: string, fail: (message: string) => Error): AsyncIterator<Buffer> {
  let stream: NodeJS.ReadableStream
  if (file === '-') stream = process.stdin
  else {
    let fd: number
    try {
      fd = fs.openSync(file, 'r')
    } catch (err) {
      throw fail(`cannot read ${file}: ${(err as Error).message}`)
    }
    stream = fs.createReadStream('', {fd, highWaterMark: CHUNK_BYTES})
  }
  const it = (stream as AsyncIterable<Buffer>)[Symbol.asyncIterator]()
  return {
    next: () =>
      it.next().catch((err: Error) => {
        throw fail(`cannot read ${file}: ${err.message}`)
      }),
    return: (value?: unknown) => it.return?.(value) ?? Promise.resolve({done: true, value: undefined}),
  }
}

const firstVisible = (b: Buffer) =>
  b
    .subarray(b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? 3 : 0)
    .toString('latin1')
    .trimStart()[0]

/** Opens `file` ("-": standard input) as streamed JSON or parsed YAML; see OpenedDocument. */
export async function openDocument(file: string, opts: OpenOptions): Promise<OpenedDocument> {
  const fail = opts.fail ?? usage
  const chunks = byteChunks(file, fail)
  // Read until the first character shows which language this is.
  const head: Buffer[] = []
  let first: string | undefined
  for (;;) {
    const r = await chunks.next()
    if (r.done) break
    head.push(r.value)
    first = firstVisible(Buffer.concat(head))
    if (first !== undefined) break
  }
  // An empty document is YAML's null, whatever its name.
  const isJson = first === '{' || first === '[' || (first !== undefined && file.toLowerCase().endsWith('.json'))
  const rest: AsyncIterable<Buffer> = {
    async *[Symbol.asyncIterator]() {
      try {
        yield* head
        head.length = 0
        for (;;) {
          const r = await chunks.next()
          if (r.done) return
          yield r.value
        }
      } finally {
        // A reader that stops early (a bad item) closes the file.
        await chunks.return?.()
      }
    },
  }
  if (!isJson) {
    const parts: Buffer[] = []
    for await (const c of rest) parts.push(c)
    try {
      return {kind: 'yaml', data: YAML.parse(Buffer.concat(parts).toString('utf8'), opts.yaml)}
    } catch (err) {
      throw fail(`${file}: not valid YAML or JSON: ${parseProblem(err as Error)}`)
    }
  }
  return {kind: 'json', members: jsonDocumentMembers(file, rest, opts, fail)}
}

async function* jsonDocumentMembers(
  file: string,
  chunks: AsyncIterable<Buffer>,
  opts: OpenOptions,
  fail: (message: string) => Error,
): AsyncGenerator<JsonMember> {
  try {
    yield* jsonMembers(chunks, opts.streamed)
  } catch (err) {
    if (!(err instanceof JsonStreamError)) throw err
    const at = err.line === undefined ? '' : `:${err.line}:${err.column}`
    throw fail(err.notAnObject ? `${file}: ${opts.notAMapping}` : `${file}${at}: not valid JSON: ${err.message}`)
  }
}
