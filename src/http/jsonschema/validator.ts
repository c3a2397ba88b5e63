/** The validator: each keyword of Draft 2020-12 as python-jsonschema 4.10 applies it. */
import {REPR_LIMIT, pyLen, pyRepr, pyStrCompare, pyStrRepr, sortedKeys} from './python-repr.js'
import {reSearch} from './python-regex.js'
import {FORMAT_CHECKERS, equalityKey, isNumber, isType, jsEqual, pyEqual} from './values.js'
import {hasOwn, isObject, type PathItem, type Schema, type SchemaError} from './types.js'

/** push(...items) without spreading: a body can fail in more places than the stack has room for. */
function append<T>(to: T[], items: T[]): void {
  for (const item of items) to.push(item)
}

/** Errors whose keyword/instance/schema are still to be filled in by iterErrors (python's _unset). */
const unset = new WeakSet<SchemaError>()

/**
 * A new error; its message is rendered on first read, so only the error that is reported
 * pays for quoting the input (a body can fail in a million places).
 */
function mkError(message: () => string, context: SchemaError[] = []): SchemaError {
  let text: string | undefined
  const err = {
    keyword: null,
    keywordValue: undefined,
    instance: undefined,
    schema: {},
    path: [],
    schemaPath: [],
    context,
  } as unknown as SchemaError
  Object.defineProperty(err, 'message', {enumerable: true, get: () => (text ??= message())})
  unset.add(err)
  return err
}

type KeywordFn = (v: Validator, value: any, instance: any, schema: Record<string, unknown>) => SchemaError[]

export class Validator {
  constructor(readonly formats: boolean) {}

  iterErrors(instance: unknown, schema: Schema): SchemaError[] {
    if (schema === true) return []
    if (schema === false) {
      return [
        {
          message: `False schema does not allow ${pyRepr(instance)}`,
          keyword: null,
          keywordValue: null,
          instance,
          schema,
          path: [],
          schemaPath: [],
          context: [],
        },
      ]
    }
    const out: SchemaError[] = []
    for (const [k, v] of Object.entries(schema)) {
      const fn = KEYWORDS[k]
      if (!fn) continue
      for (const err of fn(this, v, instance, schema)) {
        if (unset.has(err)) {
          unset.delete(err)
          err.keyword = k
          err.keywordValue = v
          err.instance = instance
          err.schema = schema
        }
        if (k !== 'if' && k !== '$ref') err.schemaPath.unshift(k)
        out.push(err)
      }
    }
    return out
  }

  descend(instance: unknown, schema: Schema, path?: PathItem, schemaPath?: PathItem): SchemaError[] {
    const errs = this.iterErrors(instance, schema)
    for (const err of errs) {
      if (path !== undefined) err.path.unshift(path)
      if (schemaPath !== undefined) err.schemaPath.unshift(schemaPath)
    }
    return errs
  }

  isValid(instance: unknown, schema: Schema): boolean {
    return this.iterErrors(instance, schema).length === 0
  }
}

function findAdditionalProperties(instance: Record<string, unknown>, schema: Record<string, unknown>): string[] {
  const properties = isObject(schema.properties) ? schema.properties : {}
  const patterns = isObject(schema.patternProperties) ? Object.keys(schema.patternProperties).join('|') : ''
  return Object.keys(instance).filter((p) => !hasOwn(properties, p) && !(patterns && reSearch(patterns, p)))
}

const KEYWORDS: Record<string, KeywordFn> = {
  type(_v, types, instance) {
    const list: string[] = typeof types === 'string' ? [types] : types
    if (list.some((t) => isType(instance, t))) return []
    return [mkError(() => `${pyRepr(instance)} is not of type ${list.map((t) => pyStrRepr(t)).join(', ')}`)]
  },

  enum(_v, enums: unknown[], instance) {
    // `if instance == 0 or instance == 1`: compare with bools kept apart from numbers,
    // otherwise plain Python `instance not in enums`.
    const zeroOrOne = typeof instance === 'boolean' || instance === 0 || instance === 1
    const found = zeroOrOne ? enums.some((e) => jsEqual(instance, e)) : enums.some((e) => pyEqual(instance, e))
    return found ? [] : [mkError(() => `${pyRepr(instance)} is not one of ${pyRepr(enums)}`)]
  },

  const(_v, c, instance) {
    return jsEqual(instance, c) ? [] : [mkError(() => `${pyRepr(c)} was expected`)]
  },

  properties(v, properties: Record<string, Schema>, instance) {
    if (!isObject(instance)) return []
    const out: SchemaError[] = []
    for (const [prop, sub] of Object.entries(properties)) {
      if (hasOwn(instance, prop)) append(out, v.descend(instance[prop], sub, prop, prop))
    }
    return out
  },

  patternProperties(v, pp: Record<string, Schema>, instance) {
    if (!isObject(instance)) return []
    const out: SchemaError[] = []
    for (const [pattern, sub] of Object.entries(pp)) {
      for (const [k, val] of Object.entries(instance)) {
        if (reSearch(pattern, k)) append(out, v.descend(val, sub, k, pattern))
      }
    }
    return out
  },

  additionalProperties(v, aP: Schema, instance, schema) {
    if (!isObject(instance)) return []
    const extras = findAdditionalProperties(instance, schema)
    if (isObject(aP)) return extras.flatMap((extra) => v.descend(instance[extra], aP, extra))
    if (aP === false && extras.length) {
      const quoted = () => {
        const sorted = sortedKeys(extras)
        const shown = sorted.slice(0, 64).map((k) => pyStrRepr(k, REPR_LIMIT))
        return shown.join(', ') + (sorted.length > shown.length ? ', ...' : '')
      }
      if ('patternProperties' in schema) {
        const verb = extras.length === 1 ? 'does' : 'do'
        const patterns = Object.keys(schema.patternProperties as object)
          .sort(pyStrCompare)
          .map((p) => pyStrRepr(p))
          .join(', ')
        return [mkError(() => `${quoted()} ${verb} not match any of the regexes: ${patterns}`)]
      }
      const verb = extras.length === 1 ? 'was' : 'were'
      return [mkError(() => `Additional properties are not allowed (${quoted()} ${verb} unexpected)`)]
    }
    return []
  },

  propertyNames(v, pn: Schema, instance) {
    if (!isObject(instance)) return []
    return Object.keys(instance).flatMap((k) => v.descend(k, pn))
  },

  required(_v, required: string[], instance) {
    if (!isObject(instance)) return []
    return required.filter((p) => !hasOwn(instance, p)).map((p) => mkError(() => `${pyStrRepr(p)} is a required property`))
  },

  minProperties(_v, mP: number, instance) {
    if (isObject(instance) && Object.keys(instance).length < mP) {
      return [mkError(() => `${pyRepr(instance)} does not have enough properties`)]
    }
    return []
  },

  maxProperties(_v, mP: number, instance) {
    if (isObject(instance) && Object.keys(instance).length > mP) {
      return [mkError(() => `${pyRepr(instance)} has too many properties`)]
    }
    return []
  },

  prefixItems(v, prefix: Schema[], instance) {
    if (!Array.isArray(instance)) return []
    const n = Math.min(prefix.length, instance.length)
    const out: SchemaError[] = []
    for (let i = 0; i < n; i++) append(out, v.descend(instance[i], prefix[i], i, i))
    return out
  },

  items(v, items: Schema | Schema[], instance, schema) {
    if (!Array.isArray(instance)) return []
    if (Array.isArray(items)) {
      // draft 4 tuple form, for completeness
      const out: SchemaError[] = []
      const n = Math.min(items.length, instance.length)
      for (let i = 0; i < n; i++) append(out, v.descend(instance[i], items[i], i, i))
      return out
    }
    const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems.length : 0
    const total = instance.length
    if (items === false && total > prefix) return [mkError(() => `Expected at most ${prefix} items, but found ${total}`)]
    const out: SchemaError[] = []
    for (let i = prefix; i < total; i++) append(out, v.descend(instance[i], items, i))
    return out
  },

  minItems(_v, mI: number, instance) {
    return Array.isArray(instance) && instance.length < mI ? [mkError(() => `${pyRepr(instance)} is too short`)] : []
  },

  maxItems(_v, mI: number, instance) {
    return Array.isArray(instance) && instance.length > mI ? [mkError(() => `${pyRepr(instance)} is too long`)] : []
  },

  uniqueItems(_v, uI: boolean, instance) {
    if (!uI || !Array.isArray(instance)) return []
    // One pass: items are equal (jsEqual) exactly when their equality keys are.
    const seen = new Set<string>()
    for (const item of instance) {
      const key = equalityKey(item)
      if (seen.has(key)) return [mkError(() => `${pyRepr(instance)} has non-unique elements`)]
      seen.add(key)
    }
    return []
  },

  pattern(_v, patrn: string, instance) {
    if (typeof instance === 'string' && !reSearch(patrn, instance)) {
      return [mkError(() => `${pyRepr(instance)} does not match ${pyStrRepr(patrn)}`)]
    }
    return []
  },

  format(v, format: string, instance) {
    if (!v.formats) return []
    const check = FORMAT_CHECKERS[format]
    if (!check || check(instance)) return []
    return [mkError(() => `${pyRepr(instance)} is not a ${pyStrRepr(format)}`)]
  },

  minLength(_v, mL: number, instance) {
    return typeof instance === 'string' && pyLen(instance) < mL ? [mkError(() => `${pyRepr(instance)} is too short`)] : []
  },

  maxLength(_v, mL: number, instance) {
    return typeof instance === 'string' && pyLen(instance) > mL ? [mkError(() => `${pyRepr(instance)} is too long`)] : []
  },

  minimum(_v, minimum: number, instance) {
    if (isNumber(instance) && instance < minimum) {
      return [mkError(() => `${pyRepr(instance)} is less than the minimum of ${pyRepr(minimum)}`)]
    }
    return []
  },

  maximum(_v, maximum: number, instance) {
    if (isNumber(instance) && instance > maximum) {
      return [mkError(() => `${pyRepr(instance)} is greater than the maximum of ${pyRepr(maximum)}`)]
    }
    return []
  },

  exclusiveMinimum(_v, minimum: number, instance) {
    if (isNumber(instance) && instance <= minimum) {
      return [mkError(() => `${pyRepr(instance)} is less than or equal to the minimum of ${pyRepr(minimum)}`)]
    }
    return []
  },

  exclusiveMaximum(_v, maximum: number, instance) {
    if (isNumber(instance) && instance >= maximum) {
      return [mkError(() => `${pyRepr(instance)} is greater than or equal to the maximum of ${pyRepr(maximum)}`)]
    }
    return []
  },

  multipleOf(_v, dB: number, instance) {
    if (!isNumber(instance)) return []
    const q = instance / dB
    if (Number.isInteger(dB) ? instance % dB !== 0 : !Number.isInteger(q)) {
      return [mkError(() => `${pyRepr(instance)} is not a multiple of ${pyRepr(dB)}`)]
    }
    return []
  },

  allOf(v, allOf: Schema[], instance) {
    return allOf.flatMap((sub, i) => v.descend(instance, sub, undefined, i))
  },

  anyOf(v, anyOf: Schema[], instance) {
    const all: SchemaError[] = []
    for (let i = 0; i < anyOf.length; i++) {
      const errs = v.descend(instance, anyOf[i], undefined, i)
      if (!errs.length) return []
      append(all, errs)
    }
    return [mkError(() => `${pyRepr(instance)} is not valid under any of the given schemas`, all)]
  },

  oneOf(v, oneOf: Schema[], instance) {
    const all: SchemaError[] = []
    let firstValid = -1
    for (let i = 0; i < oneOf.length; i++) {
      const errs = v.descend(instance, oneOf[i], undefined, i)
      if (!errs.length) {
        firstValid = i
        break
      }
      append(all, errs)
    }
    const out: SchemaError[] = []
    if (firstValid < 0) {
      out.push(mkError(() => `${pyRepr(instance)} is not valid under any of the given schemas`, all))
      return out
    }
    const more = oneOf.slice(firstValid + 1).filter((s) => v.isValid(instance, s))
    if (more.length) {
      more.push(oneOf[firstValid])
      out.push(mkError(() => `${pyRepr(instance)} is valid under each of ${more.map((s) => pyRepr(s)).join(', ')}`))
    }
    return out
  },

  not(v, notSchema: Schema, instance) {
    if (v.isValid(instance, notSchema)) {
      return [mkError(() => `${pyRepr(instance)} should not be valid under ${pyRepr(notSchema)}`)]
    }
    return []
  },

  if(v, ifSchema: Schema, instance, schema) {
    if (v.isValid(instance, ifSchema)) {
      return 'then' in schema ? v.descend(instance, schema.then as Schema, undefined, 'then') : []
    }
    return 'else' in schema ? v.descend(instance, schema.else as Schema, undefined, 'else') : []
  },
}
