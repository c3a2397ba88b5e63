import {describe, expect, it} from 'vitest'

import {bestMatch, iterErrors, isUuidLike, pformat, pyRepr, validateSchema} from '../../src/http/jsonschema.js'
import * as S from '../../src/http/schemas/index.js'

// Expected texts below were produced by python-jsonschema 4.10.3 (jsonschema.validate
// with a FormatChecker and Placement's uuid checker) on the same schema and instance.

const U1 = '8c974f9a-f266-42f7-8613-a8017cbfb87f'

const firstLine = (s: string | null) => (s ?? '').split('\n')[0]
const failedLine = (s: string | null) => (s ?? '').split('\n')[2]

describe('pyRepr', () => {
  it('renders JSON values as Python would', () => {
    expect(pyRepr(null)).toBe('None')
    expect(pyRepr(true)).toBe('True')
    expect(pyRepr(false)).toBe('False')
    expect(pyRepr(1)).toBe('1')
    expect(pyRepr(-3)).toBe('-3')
    expect(pyRepr(1.5)).toBe('1.5')
    expect(pyRepr(3.40282e38)).toBe('3.40282e+38')
    expect(pyRepr(1e-7)).toBe('1e-07')
    expect(pyRepr(0.0001)).toBe('0.0001')
    expect(pyRepr(0.00001)).toBe('1e-05')
    expect(pyRepr('x')).toBe("'x'")
    expect(pyRepr("it's")).toBe('"it\'s"')
    expect(pyRepr('both \' and "')).toBe("'both \\' and \"'")
    expect(pyRepr('tab\tnl\n\u0001é\u00a0')).toBe("'tab\\tnl\\n\\x01é\\xa0'")
    expect(pyRepr([])).toBe('[]')
    expect(pyRepr({})).toBe('{}')
    expect(pyRepr({b: 1, a: [true, null, 'x']})).toBe("{'b': 1, 'a': [True, None, 'x']}")
    expect(pyRepr(['none', 'isolate'])).toBe("['none', 'isolate']")
  })
})

describe('pformat', () => {
  it('sorts keys and wraps at width 72 like pprint', () => {
    expect(pformat({type: 'string', maxLength: 200})).toBe("{'maxLength': 200, 'type': 'string'}")
    expect(pformat(S.RESOURCE_PROVIDER_POST_1_0)).toBe(
      "{'additionalProperties': False,\n" +
        " 'properties': {'name': {'maxLength': 200, 'type': 'string'},\n" +
        "                'uuid': {'format': 'uuid', 'type': 'string'}},\n" +
        " 'required': ['name'],\n" +
        " 'type': 'object'}",
    )
  })

  it('splits long top-level strings at whitespace inside parentheses', () => {
    const name = 'This is a long text of 201 characters' + 's'.repeat(164)
    expect(pformat(name)).toBe(`('This is a long text of 201 '\n 'characters${'s'.repeat(164)}')`)
  })
})

describe('validateSchema messages', () => {
  it('returns null for valid instances', () => {
    expect(validateSchema(S.RESOURCE_PROVIDER_POST_1_14, {name: 'rp', uuid: U1, parent_provider_uuid: null})).toBeNull()
    expect(validateSchema(S.ALLOCATION_CANDIDATES_GET_QUERY_1_36, {resources: 'VCPU:1', resources_X: 'VCPU:1'})).toBeNull()
  })

  it('required', () => {
    expect(validateSchema(S.RESOURCE_PROVIDER_POST_1_0, {})).toBe(
      "'name' is a required property\n\n" +
        "Failed validating 'required' in schema:\n" +
        "    {'additionalProperties': False,\n" +
        "     'properties': {'name': {'maxLength': 200, 'type': 'string'},\n" +
        "                    'uuid': {'format': 'uuid', 'type': 'string'}},\n" +
        "     'required': ['name'],\n" +
        "     'type': 'object'}\n\n" +
        'On instance:\n' +
        '    {}',
    )
  })

  it('type', () => {
    expect(validateSchema(S.RESOURCE_PROVIDER_POST_1_0, {name: 1})).toBe(
      "1 is not of type 'string'\n\n" +
        "Failed validating 'type' in schema['properties']['name']:\n" +
        "    {'maxLength': 200, 'type': 'string'}\n\n" +
        "On instance['name']:\n" +
        '    1',
    )
    const r = validateSchema(S.RESOURCE_PROVIDER_TRAITS_PUT, {traits: [], resource_provider_generation: null})
    expect(firstLine(r)).toBe("None is not of type 'integer'")
    expect(failedLine(r)).toBe("Failed validating 'type' in schema['properties']['resource_provider_generation']:")
    expect(firstLine(validateSchema(S.RESOURCE_PROVIDER_TRAITS_PUT, {traits: 'invalid_type', resource_provider_generation: 1}))).toBe(
      "'invalid_type' is not of type 'array'",
    )
    expect(firstLine(validateSchema({type: ['integer', 'null']}, 'x'))).toBe("'x' is not of type 'integer', 'null'")
    expect(firstLine(validateSchema({type: 'integer'}, true))).toBe("True is not of type 'integer'")
    expect(firstLine(validateSchema({type: 'integer'}, 1.5))).toBe("1.5 is not of type 'integer'")
    expect(validateSchema({type: 'integer'}, 2.0)).toBeNull()
  })

  it('maxLength / minLength', () => {
    const name = 'This is a long text of 201 characters' + 's'.repeat(164)
    expect(validateSchema(S.RESOURCE_PROVIDER_POST_1_0, {name})).toBe(
      `'${name}' is too long\n\n` +
        "Failed validating 'maxLength' in schema['properties']['name']:\n" +
        "    {'maxLength': 200, 'type': 'string'}\n\n" +
        "On instance['name']:\n" +
        `    ('This is a long text of 201 '\n     'characters${'s'.repeat(164)}')`,
    )
    expect(validateSchema(S.USAGES_GET_QUERY_1_9, {project_id: ''})).toBe(
      "'' is too short\n\n" +
        "Failed validating 'minLength' in schema['properties']['project_id']:\n" +
        "    {'maxLength': 255, 'minLength': 1, 'type': 'string'}\n\n" +
        "On instance['project_id']:\n" +
        "    ''",
    )
    // lengths count code points, as Python's len()
    expect(validateSchema({type: 'string', maxLength: 2}, '😀😀')).toBeNull()
    expect(firstLine(validateSchema(S.RESOURCE_CLASS_PUT, {name: 'CUSTOM_' + 'A'.repeat(249)}))).toMatch(/ is too long$/)
  })

  it('additionalProperties', () => {
    expect(validateSchema(S.RESOURCE_PROVIDER_PUT_1_0, {name: 'x', foo: 1})).toBe(
      "Additional properties are not allowed ('foo' was unexpected)\n\n" +
        "Failed validating 'additionalProperties' in schema:\n" +
        "    {'additionalProperties': False,\n" +
        "     'properties': {'name': {'maxLength': 200, 'type': 'string'}},\n" +
        "     'required': ['name'],\n" +
        "     'type': 'object'}\n\n" +
        'On instance:\n' +
        "    {'foo': 1, 'name': 'x'}",
    )
    expect(firstLine(validateSchema({type: 'object', additionalProperties: false}, {z: 1, b: 2}))).toBe(
      "Additional properties are not allowed ('b', 'z' were unexpected)",
    )
    expect(firstLine(validateSchema(S.ALLOCATIONS_POST_1_13, {x: {}}))).toBe("'x' does not match any of the regexes: '^[0-9a-fA-F-]{36}$'")
    const r = validateSchema(S.ALLOCATION_CANDIDATES_GET_QUERY_1_33, {'resources1@': 'VCPU:1'})
    expect(firstLine(r)).toBe(
      "'resources1@' does not match any of the regexes: '^in_tree([a-zA-Z0-9_-]{1,64})?$', " +
        "'^member_of([a-zA-Z0-9_-]{1,64})?$', '^required([a-zA-Z0-9_-]{1,64})?$', '^resources([a-zA-Z0-9_-]{1,64})?$'",
    )
    expect(failedLine(r)).toBe("Failed validating 'additionalProperties' in schema:")
    expect(firstLine(validateSchema({type: 'object', patternProperties: {'^a': {}}, additionalProperties: false}, {z: 1, b: 2}))).toBe(
      "'b', 'z' do not match any of the regexes: '^a'",
    )
  })

  it('minProperties / minItems / uniqueItems', () => {
    const base = {allocations: {}, project_id: 'p', user_id: 'u', consumer_generation: null, consumer_type: 'INSTANCE'}
    const r = validateSchema(S.ALLOCATIONS_PUT_1_38, {...base, mappings: {}})
    expect(firstLine(r)).toBe('{} does not have enough properties')
    expect(failedLine(r)).toBe("Failed validating 'minProperties' in schema['properties']['mappings']:")
    expect(firstLine(validateSchema(S.ALLOCATIONS_PUT_1_38, {...base, mappings: {alpha: 'beta'}}))).toBe("'beta' is not of type 'array'")
    const r2 = validateSchema(S.ALLOCATIONS_PUT_1_0, {allocations: []})
    expect(firstLine(r2)).toBe('[] is too short')
    expect(failedLine(r2)).toBe("Failed validating 'minItems' in schema['properties']['allocations']:")
    const r3 = validateSchema(S.AGGREGATES_PUT_1_19, {aggregates: [U1, U1], resource_provider_generation: 2})
    expect(firstLine(r3)).toBe(`['${U1}', '${U1}'] has non-unique elements`)
    expect(r3).toContain(`On instance['aggregates']:\n    ['${U1}',\n     '${U1}']`)
    expect(firstLine(validateSchema({maxProperties: 0}, {x: null}))).toBe("{'x': None} has too many properties")
    expect(firstLine(validateSchema({maxItems: 1}, [1, 'a']))).toBe("[1, 'a'] is too long")
    // booleans are not equal to numbers
    expect(validateSchema({uniqueItems: true}, [1, true])).toBeNull()
  })

  it('minimum / maximum', () => {
    const r = validateSchema(S.INVENTORY_POST, {resource_class: 'VCPU', total: 0})
    expect(r).toBe(
      '0 is less than the minimum of 1\n\n' +
        "Failed validating 'minimum' in schema['properties']['total']:\n" +
        "    {'maximum': 2147483647, 'minimum': 1, 'type': 'integer'}\n\n" +
        "On instance['total']:\n" +
        '    0',
    )
    expect(firstLine(validateSchema(S.INVENTORY_POST, {resource_class: 'VCPU', total: -1}))).toBe('-1 is less than the minimum of 1')
    const r2 = validateSchema(S.INVENTORY_PUT_SINGLE, {resource_provider_generation: 0, total: 1, allocation_ratio: 3.5e38})
    expect(firstLine(r2)).toBe('3.5e+38 is greater than the maximum of 3.40282e+38')
    expect(failedLine(r2)).toBe("Failed validating 'maximum' in schema['properties']['allocation_ratio']:")
    expect(firstLine(validateSchema(S.INVENTORY_PUT_SINGLE, {resource_provider_generation: 0, total: 2147483648}))).toBe(
      '2147483648 is greater than the maximum of 2147483647',
    )
    const alloc = {allocations: [{resource_provider: {uuid: U1}, resources: {DISK_GB: 0}}]}
    const r3 = validateSchema(S.ALLOCATIONS_PUT_1_0, alloc)
    expect(firstLine(r3)).toBe('0 is less than the minimum of 1')
    expect(failedLine(r3)).toBe(
      "Failed validating 'minimum' in schema['properties']['allocations']['items']['properties']['resources']['patternProperties']['^[A-Z0-9_]+$']:",
    )
    expect(r3).toContain("On instance['allocations'][0]['resources']['DISK_GB']:\n    0")
    expect(firstLine(validateSchema({exclusiveMinimum: 0}, 0))).toBe('0 is less than or equal to the minimum of 0')
  })

  it('pattern and enum', () => {
    const r = validateSchema(S.ALLOCATIONS_PUT_1_38, {
      allocations: {},
      project_id: 'p',
      user_id: 'u',
      consumer_generation: null,
      consumer_type: 'instance',
    })
    expect(firstLine(r)).toBe("'instance' does not match '^[A-Z0-9_]+$'")
    expect(failedLine(r)).toBe("Failed validating 'pattern' in schema['properties']['consumer_type']:")
    expect(firstLine(validateSchema(S.RESOURCE_CLASS_PUT, {name: 'VCPU'}))).toBe("'VCPU' does not match '^CUSTOM_[A-Z0-9_]+$'")
    const r2 = validateSchema(S.ALLOCATION_CANDIDATES_GET_QUERY_1_16, {resources: 'VCPU:1', limit: '0'})
    expect(firstLine(r2)).toBe("'0' does not match '^[1-9][0-9]*$'")
    expect(failedLine(r2)).toBe("Failed validating 'pattern' in schema['properties']['limit']:")
    const r3 = validateSchema(S.ALLOCATION_CANDIDATES_GET_QUERY_1_36, {resources: 'VCPU:1', group_policy: 'bogus'})
    expect(firstLine(r3)).toBe("'bogus' is not one of ['none', 'isolate']")
    expect(failedLine(r3)).toBe("Failed validating 'enum' in schema['properties']['group_policy']:")
    // Stricter than Python's `$` on purpose: a name with a final newline could not be answered
    expect(firstLine(validateSchema(S.CUSTOM_TRAIT, 'CUSTOM_A\n'))).toBe("'CUSTOM_A\\n' does not match '^CUSTOM_[A-Z0-9_]+$'")
    expect(validateSchema(S.CUSTOM_TRAIT, 'CUSTOM_A\n\n')).not.toBeNull()
    // consumer_type in GET /usages: unanchored alternation
    expect(validateSchema(S.USAGES_GET_QUERY_1_38, {project_id: 'p', consumer_type: 'all'})).toBeNull()
    expect(validateSchema(S.USAGES_GET_QUERY_1_38, {project_id: 'p', consumer_type: 'allsorts'})).toBeNull()
    expect(firstLine(validateSchema(S.USAGES_GET_QUERY_1_38, {project_id: 'p', consumer_type: 'x'}))).toBe(
      "'x' does not match '^[A-Z0-9_]+$|^all|^unknown$'",
    )
    // bools and numbers stay apart in enum
    expect(firstLine(validateSchema({enum: [1, 2]}, true))).toBe('True is not one of [1, 2]')
  })

  it('format uuid uses oslo is_uuid_like', () => {
    const r = validateSchema(S.RESOURCE_PROVIDER_POST_1_0, {name: 'my bad rp', uuid: 'this is not a uuid'})
    expect(firstLine(r)).toBe("'this is not a uuid' is not a 'uuid'")
    expect(failedLine(r)).toBe("Failed validating 'format' in schema['properties']['uuid']:")
    expect(firstLine(validateSchema(S.AGGREGATES_PUT_1_19, {aggregates: ['harry', 'sally'], resource_provider_generation: 2}))).toBe(
      "'harry' is not a 'uuid'",
    )
    expect(isUuidLike(U1)).toBe(true)
    expect(isUuidLike(U1.toUpperCase())).toBe(true)
    expect(isUuidLike(U1.replace(/-/g, ''))).toBe(true)
    expect(isUuidLike(`urn:uuid:{${U1}}`)).toBe(true)
    expect(isUuidLike(U1.slice(0, -1))).toBe(false)
    expect(isUuidLike(' ' + U1)).toBe(false)
    expect(isUuidLike(12)).toBe(false)
    expect(firstLine(validateSchema({format: 'uuid'}, null))).toBe("None is not a 'uuid'")
    // format is skipped when asked (PUT /traits/{name} validates without a checker)
    expect(validateSchema({format: 'uuid'}, 'x', {formatChecker: false})).toBeNull()
  })

  it('anyOf: descends into the context unless the best two tie', () => {
    // a string: the format error (type matches) beats the null type error
    expect(validateSchema(S.RESOURCE_PROVIDER_POST_1_14, {name: 'x', parent_provider_uuid: 'bad'})).toBe(
      "'bad' is not a 'uuid'\n\n" +
        "Failed validating 'format' in schema[0]:\n" +
        "    {'format': 'uuid', 'type': 'string'}\n\n" +
        'On instance:\n' +
        "    'bad'",
    )
    // an int: every context error ties, so the anyOf error itself is reported
    expect(validateSchema(S.RESOURCE_PROVIDER_POST_1_14, {name: 'x', parent_provider_uuid: 5})).toBe(
      '5 is not valid under any of the given schemas\n\n' +
        "Failed validating 'anyOf' in schema['properties']['parent_provider_uuid']:\n" +
        "    {'anyOf': [{'format': 'uuid', 'type': 'string'}, {'type': 'null'}]}\n\n" +
        "On instance['parent_provider_uuid']:\n" +
        '    5',
    )
    expect(firstLine(validateSchema({oneOf: [{type: 'integer'}, {minimum: 0}]}, 5))).toBe(
      "5 is valid under each of {'minimum': 0}, {'type': 'integer'}",
    )
    expect(firstLine(validateSchema({not: {type: 'string'}}, 'a'))).toBe("'a' should not be valid under {'type': 'string'}")
  })

  it('best_match prefers errors closer to the root', () => {
    const r = validateSchema(S.RESOURCE_PROVIDER_POST_1_0, {name: 5, extra: 1})
    expect(firstLine(r)).toBe("Additional properties are not allowed ('extra' was unexpected)")
    const errs = iterErrors(S.RESOURCE_PROVIDER_POST_1_0, {name: 5, extra: 1})
    expect(errs.map((e) => e.keyword)).toEqual(['type', 'additionalProperties'])
    expect(bestMatch(errs)?.keyword).toBe('additionalProperties')
    // same depth: first in schema order wins (required before additionalProperties here)
    expect(firstLine(validateSchema(S.RESOURCE_PROVIDER_POST_1_0, {extra: 1}))).toBe("'name' is a required property")
    // reshaper: an unexpected field deep inside one consumer
    const body = {
      inventories: {[U1]: {resource_provider_generation: 1, inventories: {VCPU: {total: 8}}}},
      allocations: {[U1]: {allocations: {}, project_id: 'p', user_id: 'u', consumer_generation: 1, bad_field: 'moo'}},
    }
    expect(firstLine(validateSchema(S.RESHAPER_POST_1_30, body))).toBe("Additional properties are not allowed ('bad_field' was unexpected)")
    // 1.38 also misses consumer_type, but the allocation schema lists additionalProperties before required
    expect(firstLine(validateSchema(S.RESHAPER_POST_1_38, body))).toBe("Additional properties are not allowed ('bad_field' was unexpected)")
    const {bad_field: _, ...fixed} = body.allocations[U1]
    expect(firstLine(validateSchema(S.RESHAPER_POST_1_38, {...body, allocations: {[U1]: fixed}}))).toBe(
      "'consumer_type' is a required property",
    )
  })
})

describe('conformance substrings', () => {
  const cases: Array<[string, object, unknown, string[]]> = [
    [
      'ac member_of before 1.21',
      S.ALLOCATION_CANDIDATES_GET_QUERY_1_17,
      {resources: 'VCPU:1', member_of: U1},
      ["'member_of' was unexpected"],
    ],
    ['ac limit before 1.16', S.ALLOCATION_CANDIDATES_GET_QUERY_1_10, {resources: 'VCPU:1', limit: '1'}, ["'limit' was unexpected"]],
    ['ac resources required', S.ALLOCATION_CANDIDATES_GET_QUERY_1_10, {}, ["'resources' is a required property"]],
    [
      'ac resources1 before 1.25',
      S.ALLOCATION_CANDIDATES_GET_QUERY_1_21,
      {resources: 'MEMORY_MB:1024', resources1: 'VCPU:1'},
      ["'resources1' was unexpected"],
    ],
    [
      'ac resources01',
      S.ALLOCATION_CANDIDATES_GET_QUERY_1_25,
      {resources01: 'VCPU:1'},
      ["'resources01' does not match any of the regexes"],
    ],
    [
      'ac root_required at 1.34',
      S.ALLOCATION_CANDIDATES_GET_QUERY_1_33,
      {resources: 'VCPU:1', root_required: 'X'},
      ["'root_required' does not match any of the regexes"],
    ],
    [
      'ac 65-char suffix',
      S.ALLOCATION_CANDIDATES_GET_QUERY_1_33,
      {['resources_' + '01234567'.repeat(8)]: 'VCPU:1'},
      [`'resources_${'01234567'.repeat(8)}' does not match any of the regexes`, '^member_of([a-zA-Z0-9_-]{1,64})?$'],
    ],
    ['traits list extra', S.TRAITS_GET_QUERY, {invalid: 'x'}, ['Additional properties are not allowed']],
    ['rp traits generation', S.RESOURCE_PROVIDER_TRAITS_PUT, {traits: []}, ["'resource_provider_generation' is a required property"]],
    [
      'rp traits generation type',
      S.RESOURCE_PROVIDER_TRAITS_PUT,
      {traits: [], resource_provider_generation: 'invalid_generation'},
      ["'invalid_generation' is not of type 'integer'"],
    ],
    ['inventory total', S.INVENTORY_POST, {resource_class: 'DISK_GB'}, ["'total' is a required property"]],
    [
      'inventory min_unit',
      S.INVENTORY_POST,
      {resource_class: 'DISK_GB', total: 1, min_unit: 0},
      ["Failed validating 'minimum' in schema['properties']['min_unit']"],
    ],
    [
      'inventory max',
      S.INVENTORIES_PUT,
      {resource_provider_generation: 0, inventories: {DISK_GB: {total: 2147483648}}},
      ["Failed validating 'maximum'"],
    ],
    [
      'allocation omitted usage',
      S.ALLOCATIONS_PUT_1_0,
      {allocations: [{resource_provider: {uuid: U1}}]},
      ["Failed validating 'required' in schema"],
    ],
    [
      'allocation 1.12 bad rp',
      S.ALLOCATIONS_PUT_1_12,
      {allocations: {'not-a-uuid': {resources: {VCPU: 1}}}, project_id: 'p', user_id: 'u'},
      ['does not match any of the regexes'],
    ],
    [
      'allocation 1.12 bad rc',
      S.ALLOCATIONS_PUT_1_12,
      {allocations: {[U1]: {resources: {vcpu: 1}}}, project_id: 'p', user_id: 'u'},
      ['does not match any of the regexes'],
    ],
    [
      'allocation 1.12 empty',
      S.ALLOCATIONS_PUT_1_12,
      {allocations: {}, project_id: 'p', user_id: 'u'},
      ['does not have enough properties'],
    ],
    [
      'consumer type post',
      S.ALLOCATIONS_POST_1_38,
      {[U1]: {allocations: {}, project_id: 'p', user_id: 'u', consumer_generation: null}},
      ["'consumer_type' is a required property"],
    ],
    [
      'consumer type before 1.38',
      S.ALLOCATIONS_PUT_1_34,
      {allocations: {}, project_id: 'p', user_id: 'u', consumer_generation: null, consumer_type: 'X'},
      ['Additional properties are not allowed', "'consumer_type' was unexpected"],
    ],
    ['usage max length', S.USAGES_GET_QUERY_1_9, {project_id: 'p'.repeat(256)}, ["Failed validating 'maxLength'"]],
    ['usage extra', S.USAGES_GET_QUERY_1_9, {project_id: 'p', foo: 'x'}, ['Additional properties are not allowed']],
    ['rc too long', S.RESOURCE_CLASS_POST, {name: 'CUSTOM_' + 'X'.repeat(250)}, ["Failed validating 'maxLength'"]],
  ]
  for (const [name, schema, instance, expected] of cases) {
    it(name, () => {
      const msg = validateSchema(schema, instance)
      expect(msg).not.toBeNull()
      for (const e of expected) expect(msg).toContain(e)
    })
  }
})

describe('bounded error texts', () => {
  it('a value that does not fit its line is written whole, not cut at the width check', () => {
    const deep = {a: {b: {c: {d: {e: {f: {g: {h: {i: {j: {k: {l: {m: {n: {o: {p: {q: {r: {s: {t: {u: {v: {w: false}}}}}}}}}}}}}}}}}}}}}}}
    expect(pformat(deep)).not.toContain('...')
    expect(pformat(deep)).toContain('False')
  })

  it('cuts huge values with "..." and keeps Placement\'s text for small ones', () => {
    expect(pyRepr('x'.repeat(10_000)).length).toBeLessThan(2100)
    expect(pyRepr('x'.repeat(10_000)).endsWith('...')).toBe(true)
    expect(pformat(Array.from({length: 100_000}, (_, i) => i)).length).toBeLessThan(8300)
    expect(pyRepr({b: [1, 'two'], a: null})).toBe("{'b': [1, 'two'], 'a': None}")
  })
})
