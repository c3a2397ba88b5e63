/** The shapes the validator's modules share (python-jsonschema's ValidationError among them). */

export type Json = unknown
export type Schema = Record<string, unknown> | boolean
export type PathItem = string | number

/** One validation error, shaped like python-jsonschema's ValidationError. */
export interface SchemaError {
  message: string
  /** The keyword that failed (python: error.validator); null for a `false` schema. */
  keyword: string | null
  keywordValue: unknown
  /** The (sub)instance that failed. */
  instance: Json
  /** The (sub)schema holding the keyword. */
  schema: Schema
  /** Instance path relative to the parent error (or the root for top-level errors). */
  path: PathItem[]
  /** Schema path relative to the parent error, ending with the keyword. */
  schemaPath: PathItem[]
  /** Sub-errors of anyOf/oneOf. */
  context: SchemaError[]
}

export interface ValidateOptions {
  /** Check "format" (Placement always passes a FormatChecker). Default true. */
  formatChecker?: boolean
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

export const hasOwn = (o: object, k: string) => Object.hasOwn(o, k)
