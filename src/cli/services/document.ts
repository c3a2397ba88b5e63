import fs from 'node:fs'
import YAML from 'yaml'
import {usageError} from '../failure.js'

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
