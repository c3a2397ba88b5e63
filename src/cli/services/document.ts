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

/** The text of a file, or of standard input for "-". */
export function readText(file: string, fail: (message: string) => Error = usage): string {
  try {
    return fs.readFileSync(file === '-' ? 0 : file, 'utf8')
  } catch (err) {
    throw fail(`cannot read ${file}: ${(err as Error).message}`)
  }
}

/** A YAML or JSON document (JSON is YAML) from a file or "-"; unreadable or malformed input fails. */
export function readDocument(file: string, opts: ReadOptions = {}): unknown {
  const fail = opts.fail ?? usage
  const text = readText(file, fail)
  try {
    return opts.jsonFastPath && /^\s*[{[]/.test(text) ? JSON.parse(text) : YAML.parse(text, opts.yaml)
  } catch (err) {
    throw fail(`${file}: not valid YAML or JSON: ${(err as Error).message.split('\n')[0]}`)
  }
}
