/**
 * A small JSON Schema validator that behaves like python-jsonschema 4.10.x
 * (the version Debian bookworm ships) as OpenStack Placement uses it:
 *
 *   jsonschema.validate(instance, schema, format_checker=jsonschema.FormatChecker())
 *
 * Facts this mimics (from jsonschema 4.10.3's sources):
 *  - No "$schema" in Placement's schemas, so `validator_for` picks the latest
 *    draft, Draft 2020-12: keywords are applied in the schema dict's order,
 *    "integer" also accepts floats with an integral value, booleans are never
 *    numbers.
 *  - `validate` raises `best_match(iter_errors(instance))`: the error with the
 *    greatest relevance key (-len(path), keyword not in {anyOf, oneOf},
 *    keyword in STRONG (empty), not error._matches_type()), the first one on
 *    ties; then, while that error has a context (anyOf/oneOf), the context's
 *    smallest-keyed error is taken unless the two smallest tie, in which case
 *    the anyOf/oneOf error itself is kept.
 *  - `str(ValidationError)`:
 *        <message>
 *
 *        Failed validating <keyword!r> in schema[<relative schema path minus keyword>]:
 *            <pprint.pformat(schema, width=72)>
 *
 *        On instance[<relative instance path>]:
 *            <pprint.pformat(instance, width=72)>
 *  - Placement registers its own "uuid" format checker
 *    (oslo_utils.uuidutils.is_uuid_like), which replaces jsonschema's own.
 *  - Python `re.search` semantics for "pattern", "patternProperties" and the
 *    additionalProperties check (unanchored), with one deliberate difference:
 *    `$` matches only at the very end. Python's `$` also matches before a final
 *    newline, so Placement accepts a name like "CUSTOM_A\n" that it can then not
 *    put in a Location header; placemat refuses it with the usual "does not match".
 *
 * Where this departs from python-jsonschema on purpose: error texts quote the
 * input, so they are bounded (a repr is cut after REPR_LIMIT characters, a
 * pformat block after PFORMAT_LIMIT, both ending in "..."), messages are only
 * rendered for the error that is reported, and uniqueItems is linear. Normal
 * inputs read exactly as Placement's.
 *
 * This module is the validator's face; its parts live in ./jsonschema/: types.ts (the
 * error's shape), python-repr.ts (repr and pformat, how errors quote), python-regex.ts
 * (Python patterns), values.ts (types, equality, formats), validator.ts (the keywords) and
 * report.ts (best_match and str() of the error).
 */

import {Validator} from './jsonschema/validator.js'
import {bestMatch, formatError} from './jsonschema/report.js'
import type {Schema, SchemaError, ValidateOptions} from './jsonschema/types.js'

export type {SchemaError, ValidateOptions} from './jsonschema/types.js'
export {PFORMAT_LIMIT, REPR_LIMIT, pformat, pyRepr} from './jsonschema/python-repr.js'
export {pyRegex} from './jsonschema/python-regex.js'
/** Placement registers oslo's is_uuid_like as the "uuid" format. */
export {isUuidLike} from './jsonschema/values.js'
export {bestMatch, formatError} from './jsonschema/report.js'

/** Every error python-jsonschema's iter_errors would yield, in the same order. */
export function iterErrors(schema: object | boolean, instance: unknown, options: ValidateOptions = {}): SchemaError[] {
  const errs = new Validator(options.formatChecker ?? true).iterErrors(instance, schema as Schema)
  return errs
}

/** The error `jsonschema.validate` would raise, or null when the instance is valid. */
export function validationError(schema: object | boolean, instance: unknown, options: ValidateOptions = {}): SchemaError | null {
  return bestMatch(iterErrors(schema, instance, options))
}

/**
 * Validates like `jsonschema.validate(instance, schema, format_checker=FormatChecker())`
 * with Placement's uuid checker: null when valid, else `str(ValidationError)`.
 */
export function validateSchema(schema: object, instance: unknown, options: ValidateOptions = {}): string | null {
  const err = validationError(schema, instance, options)
  return err ? formatError(err) : null
}
