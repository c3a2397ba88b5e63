/**
 * What every schema module shares (Placement's placement/schemas/common.py, and the helpers).
 *
 * src/http/schemas/ holds the JSON schemas OpenStack Placement 8.0.0 validates request
 * bodies and query strings with (placement/schemas/*.py), one module per resource, and
 * placemat's own under /placemat/v1. They are transcribed with the same key
 * order as the Python dicts end up with: python-jsonschema applies keywords,
 * properties and patternProperties in dict order, and that order decides
 * which error gets reported when several tie. Validate them with
 * `validateSchema` from ../jsonschema.js, or read a body with `readJson(ctx, schema)`
 * (../context.js), which returns the type the schema carries (`Schema<T>`).
 *
 * How Placement reports validation failures (placement/util.py):
 *
 *  - Request bodies, `extract_json(body, schema)`:
 *      body not JSON  -> 400 "Malformed JSON: <python json error>"
 *      schema failure -> 400 "JSON does not validate: <str(ValidationError)>"
 *    where str(ValidationError) is exactly what `validateSchema` returns,
 *    i.e. "<message>\n\nFailed validating '<kw>' in schema[...]:\n    <schema>\n\nOn instance[...]:\n    <instance>".
 *
 *  - Query strings, `validate_query_params(req, schema)`:
 *      schema failure -> 400 "Invalid query string parameters: <str(ValidationError)>"
 *    The instance is `dict(req.GET)`: every parameter name once, in order of
 *    first appearance, with its LAST value (webob MultiDict.__getitem__), all
 *    values strings. Later, handler code raises other 400s that reuse the
 *    same prefix, e.g. "Invalid query string parameters: Expected 'required'
 *    parameter value of the form: ..." — those are not schema errors.
 *
 *  - The detail text goes through webob: the body template is
 *    "${explanation}<br /><br />\n${detail}\n${html_comment}\n" and Placement's
 *    json_error_formatter applies webob.exc.strip_tags, which replaces every
 *    "\n" with " ", drops "\r", turns "<br ...>" into "\n" and removes anything
 *    looking like a tag ("<...>"). So in the JSON error `detail` the multi-line
 *    jsonschema text appears on one line, e.g.
 *    "...incorrect.\n\nJSON does not validate: 0 is less than the minimum of 1  Failed validating 'minimum' in schema['properties']['total']:     {'maximum': 2147483647, 'minimum': 1, 'type': 'integer'}  On instance['total']:     0  "
 *
 *  - PUT /traits/{name} (1.6+) validates the name against CUSTOM_TRAIT with
 *    plain `jsonschema.validate` (no format checker) and on failure answers
 *    400 'The trait is invalid. A valid trait must be no longer than 255
 *    characters, start with the prefix "CUSTOM_" and use following
 *    characters: "A"-"Z", "0"-"9" and "_"'.
 *
 *  - PUT /resource_classes/{name} at 1.7+ validates the path's name by
 *    running extract_json('{"name": "%s"}' % name, PUT_RC_SCHEMA_V1_2), so a
 *    bad name yields "JSON does not validate: ..." (or "Malformed JSON: ..."
 *    when the name breaks the JSON, e.g. contains a double quote).
 */

/** Microversion, as the handlers test it: `gte(n)` is true when the request is at 1.n or later. */
export interface VersionLike {
  gte(minor: number): boolean
}

/** A JSON schema, as plain data. */
export type S = Record<string, unknown>

/**
 * A schema together with the TypeScript type of what it accepts: `readJson(ctx, schema)`
 * returns a T. The type is the schema's promise, so each module writes the two side by side
 * (`export const X: Schema<XBody> = {...}` under `export interface XBody`). A plain schema
 * fits any Schema<T>; two schemas of different types do not fit each other.
 */
export type Schema<T> = S & {readonly __accepts?: T}

/** Deep copy, so derived schemas never share (and never mutate) nested objects. */
export const clone = <T>(v: T): T => structuredClone(v)

/** Placement's schemas are immutable: derive new ones with structuredClone. */
export function deepFreeze(...schemas: unknown[]): void {
  for (const v of schemas) {
    if (typeof v !== 'object' || v === null || Object.isFrozen(v)) continue
    Object.freeze(v)
    deepFreeze(...Object.values(v))
  }
}

/** One member of an object schema's properties. */
export const prop = (schema: S, key: string) => (schema.properties as Record<string, unknown>)[key]

// ---------------------------------------------------------------------------
// common.py
// ---------------------------------------------------------------------------

const UUID_CHAR = '[0-9a-fA-F-]'
/** Resource provider / consumer uuid keys in patternProperties (loose: 36 hex-or-dash chars). */
export const UUID_PATTERN = `^${UUID_CHAR}{36}$`
const RC_TRAIT_CHAR = '[A-Z0-9_]'
/** Resource class names (standard or custom). */
export const RC_PATTERN = `^${RC_TRAIT_CHAR}+$`
/** Custom resource class names. */
export const CUSTOM_RC_PATTERN = `^CUSTOM_${RC_TRAIT_CHAR}+$`
/** Custom trait names. */
export const CUSTOM_TRAIT_PATTERN = CUSTOM_RC_PATTERN
/** consumer_type in allocation bodies (1.38+). */
export const CONSUMER_TYPE_PATTERN = RC_PATTERN
/** consumer_type in GET /usages (1.38+): also 'all' and 'unknown' (unanchored alternation, as in Placement). */
export const CONSUMER_TYPE_GET_PATTERN = `${CONSUMER_TYPE_PATTERN}|^all|^unknown$`
/** Request group suffix before 1.33: numbered. */
export const GROUP_PAT = '[1-9][0-9]*'
/** Request group suffix from 1.33: alphanumeric, '_' and '-', up to 64 chars. */
export const GROUP_PAT_1_33 = '[a-zA-Z0-9_-]{1,64}'

/** placement.db.constants */
export const MAX_INT = 0x7fffffff
export const SQL_SP_FLOAT_MAX = 3.40282e38
