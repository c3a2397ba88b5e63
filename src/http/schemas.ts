/**
 * The JSON schemas OpenStack Placement 8.0.0 validates request bodies and
 * query strings with (placement/schemas/*.py), transcribed with the same key
 * order as the Python dicts end up with: python-jsonschema applies keywords,
 * properties and patternProperties in dict order, and that order decides
 * which error gets reported when several tie. Validate them with
 * `validateSchema` from ./jsonschema.js.
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

type S = Record<string, unknown>
/** Deep copy, so derived schemas never share (and never mutate) nested objects. */
const clone = <T>(v: T): T => structuredClone(v)

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

// ---------------------------------------------------------------------------
// resource_provider.py
// ---------------------------------------------------------------------------

/** POST /resource_providers body, 1.0-1.13. */
export const RESOURCE_PROVIDER_POST_1_0: S = {
  type: 'object',
  properties: {
    name: {type: 'string', maxLength: 200},
    uuid: {type: 'string', format: 'uuid'},
  },
  required: ['name'],
  additionalProperties: false,
}

/** PUT /resource_providers/{uuid} body, 1.0-1.13. */
export const RESOURCE_PROVIDER_PUT_1_0: S = (() => {
  const s = clone(RESOURCE_PROVIDER_POST_1_0)
  delete (s.properties as S).uuid
  return s
})()

const PARENT_PROVIDER_UUID = {
  anyOf: [{type: 'string', format: 'uuid'}, {type: 'null'}],
}

/** POST /resource_providers body, 1.14+ (adds parent_provider_uuid: uuid or null). */
export const RESOURCE_PROVIDER_POST_1_14: S = (() => {
  const s = clone(RESOURCE_PROVIDER_POST_1_0)
  ;(s.properties as S).parent_provider_uuid = clone(PARENT_PROVIDER_UUID)
  return s
})()

/** PUT /resource_providers/{uuid} body, 1.14+ (name, parent_provider_uuid). */
export const RESOURCE_PROVIDER_PUT_1_14: S = (() => {
  const s = clone(RESOURCE_PROVIDER_POST_1_14)
  delete (s.properties as S).uuid
  return s
})()

/** GET /resource_providers query, 1.0-1.2: name, uuid. */
export const RESOURCE_PROVIDERS_GET_QUERY_1_0: S = {
  type: 'object',
  properties: {
    name: {type: 'string'},
    uuid: {type: 'string', format: 'uuid'},
  },
  additionalProperties: false,
}

/** GET /resource_providers query, 1.3: adds member_of. */
export const RESOURCE_PROVIDERS_GET_QUERY_1_3: S = (() => {
  const s = clone(RESOURCE_PROVIDERS_GET_QUERY_1_0)
  ;(s.properties as S).member_of = {type: 'string'}
  return s
})()

/** GET /resource_providers query, 1.4-1.13: adds resources. */
export const RESOURCE_PROVIDERS_GET_QUERY_1_4: S = (() => {
  const s = clone(RESOURCE_PROVIDERS_GET_QUERY_1_3)
  ;(s.properties as S).resources = {type: 'string'}
  return s
})()

/** GET /resource_providers query, 1.14-1.17: adds in_tree (uuid format). */
export const RESOURCE_PROVIDERS_GET_QUERY_1_14: S = (() => {
  const s = clone(RESOURCE_PROVIDERS_GET_QUERY_1_4)
  ;(s.properties as S).in_tree = {type: 'string', format: 'uuid'}
  return s
})()

/** GET /resource_providers query, 1.18+: adds required. */
export const RESOURCE_PROVIDERS_GET_QUERY_1_18: S = (() => {
  const s = clone(RESOURCE_PROVIDERS_GET_QUERY_1_14)
  ;(s.properties as S).required = {type: 'string'}
  return s
})()

export const resourceProviderPostSchema = (v: VersionLike): S =>
  v.gte(14) ? RESOURCE_PROVIDER_POST_1_14 : RESOURCE_PROVIDER_POST_1_0

export const resourceProviderPutSchema = (v: VersionLike): S =>
  v.gte(14) ? RESOURCE_PROVIDER_PUT_1_14 : RESOURCE_PROVIDER_PUT_1_0

export const resourceProvidersGetQuerySchema = (v: VersionLike): S =>
  v.gte(18)
    ? RESOURCE_PROVIDERS_GET_QUERY_1_18
    : v.gte(14)
      ? RESOURCE_PROVIDERS_GET_QUERY_1_14
      : v.gte(4)
        ? RESOURCE_PROVIDERS_GET_QUERY_1_4
        : v.gte(3)
          ? RESOURCE_PROVIDERS_GET_QUERY_1_3
          : RESOURCE_PROVIDERS_GET_QUERY_1_0

// ---------------------------------------------------------------------------
// inventory.py
// ---------------------------------------------------------------------------

/** PUT /resource_providers/{uuid}/inventories/{rc} body (all microversions). */
export const INVENTORY_PUT_SINGLE: S = {
  type: 'object',
  properties: {
    resource_provider_generation: {type: 'integer'},
    total: {type: 'integer', maximum: MAX_INT, minimum: 1},
    reserved: {type: 'integer', maximum: MAX_INT, minimum: 0},
    min_unit: {type: 'integer', maximum: MAX_INT, minimum: 1},
    max_unit: {type: 'integer', maximum: MAX_INT, minimum: 1},
    step_size: {type: 'integer', maximum: MAX_INT, minimum: 1},
    allocation_ratio: {type: 'number', maximum: SQL_SP_FLOAT_MAX},
  },
  required: ['total', 'resource_provider_generation'],
  additionalProperties: false,
}
/** Placement's name for INVENTORY_PUT_SINGLE. */
export const BASE_INVENTORY_SCHEMA = INVENTORY_PUT_SINGLE

/** POST /resource_providers/{uuid}/inventories body (all microversions): adds resource_class, no generation required. */
export const INVENTORY_POST: S = (() => {
  const s = clone(INVENTORY_PUT_SINGLE)
  ;(s.properties as S).resource_class = {type: 'string', pattern: RC_PATTERN}
  s.required = ['total', 'resource_class']
  return s
})()

/** One inventory record inside PUT /resource_providers/{uuid}/inventories (and the reshaper). */
export const INVENTORY_RECORD: S = (() => {
  const s = clone(INVENTORY_PUT_SINGLE)
  s.required = ['total']
  return s
})()

/** PUT /resource_providers/{uuid}/inventories body (all microversions); also each provider's entry in the reshaper. */
export const INVENTORIES_PUT: S = {
  type: 'object',
  properties: {
    resource_provider_generation: {type: 'integer'},
    inventories: {
      type: 'object',
      patternProperties: {
        [RC_PATTERN]: INVENTORY_RECORD,
      },
    },
  },
  required: ['resource_provider_generation', 'inventories'],
  additionalProperties: false,
}

// ---------------------------------------------------------------------------
// aggregate.py
// ---------------------------------------------------------------------------

const AGGREGATES_LIST = {
  type: 'array',
  items: {type: 'string', format: 'uuid'},
  uniqueItems: true,
}

/** PUT /resource_providers/{uuid}/aggregates body, 1.1-1.18: a bare list of uuids. */
export const AGGREGATES_PUT_1_1: S = clone(AGGREGATES_LIST)

/** PUT /resource_providers/{uuid}/aggregates body, 1.19+: {aggregates, resource_provider_generation}. */
export const AGGREGATES_PUT_1_19: S = {
  type: 'object',
  properties: {
    aggregates: clone(AGGREGATES_LIST),
    resource_provider_generation: {type: 'integer'},
  },
  required: ['aggregates', 'resource_provider_generation'],
  additionalProperties: false,
}

export const aggregatesPutSchema = (v: VersionLike): S => (v.gte(19) ? AGGREGATES_PUT_1_19 : AGGREGATES_PUT_1_1)

// ---------------------------------------------------------------------------
// trait.py
// ---------------------------------------------------------------------------

/** A trait name in PUT /resource_providers/{uuid}/traits. */
export const TRAIT: S = {type: 'string', minLength: 1, maxLength: 255}

/**
 * PUT /traits/{name} (1.6+): the path's name, validated without a format
 * checker; failure gives Placement's fixed "The trait is invalid. ..." message.
 */
export const CUSTOM_TRAIT: S = {...clone(TRAIT), pattern: CUSTOM_TRAIT_PATTERN}

/** Placement defines this ({traits: [custom traits]}) but no 8.0.0 handler uses it. */
export const PUT_TRAITS_SCHEMA: S = {
  type: 'object',
  properties: {
    traits: {type: 'array', items: CUSTOM_TRAIT},
  },
  required: ['traits'],
  additionalProperties: false,
}

/** PUT /resource_providers/{uuid}/traits body (1.6+). */
export const RESOURCE_PROVIDER_TRAITS_PUT: S = (() => {
  const s = clone(PUT_TRAITS_SCHEMA)
  const props = s.properties as S
  ;(props.traits as S).items = TRAIT
  props.resource_provider_generation = {type: 'integer'}
  ;(s.required as string[]).push('resource_provider_generation')
  return s
})()

/** GET /traits query (1.6+): name, associated. */
export const TRAITS_GET_QUERY: S = {
  type: 'object',
  properties: {
    name: {type: 'string'},
    associated: {type: 'string'},
  },
  additionalProperties: false,
}

// ---------------------------------------------------------------------------
// resource_class.py
// ---------------------------------------------------------------------------

/** POST /resource_classes body (1.2+). */
export const RESOURCE_CLASS_POST: S = {
  type: 'object',
  properties: {
    name: {type: 'string', pattern: CUSTOM_RC_PATTERN, maxLength: 255},
  },
  required: ['name'],
  additionalProperties: false,
}

/** PUT /resource_classes/{name}: the body at 1.2-1.6; at 1.7+ a synthetic {"name": <path name>}. */
export const RESOURCE_CLASS_PUT: S = clone(RESOURCE_CLASS_POST)

// ---------------------------------------------------------------------------
// allocation.py
// ---------------------------------------------------------------------------

/** PUT /allocations/{consumer_uuid} body, 1.0-1.7: list form. */
export const ALLOCATIONS_PUT_1_0: S = {
  type: 'object',
  properties: {
    allocations: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        properties: {
          resource_provider: {
            type: 'object',
            properties: {
              uuid: {type: 'string', format: 'uuid'},
            },
            additionalProperties: false,
            required: ['uuid'],
          },
          resources: {
            type: 'object',
            minProperties: 1,
            patternProperties: {
              [RC_PATTERN]: {type: 'integer', minimum: 1},
            },
            additionalProperties: false,
          },
        },
        required: ['resource_provider', 'resources'],
        additionalProperties: false,
      },
    },
  },
  required: ['allocations'],
  additionalProperties: false,
}

/** PUT /allocations/{consumer_uuid} body, 1.8-1.11: list form plus required project_id, user_id. */
export const ALLOCATIONS_PUT_1_8: S = (() => {
  const s = clone(ALLOCATIONS_PUT_1_0)
  const props = s.properties as S
  props.project_id = {type: 'string', minLength: 1, maxLength: 255}
  props.user_id = {type: 'string', minLength: 1, maxLength: 255}
  ;(s.required as string[]).push('project_id', 'user_id')
  return s
})()

/** PUT /allocations/{consumer_uuid} body, 1.12-1.27: dict form keyed by provider uuid, non-empty. */
export const ALLOCATIONS_PUT_1_12: S = {
  type: 'object',
  properties: {
    allocations: {
      type: 'object',
      minProperties: 1,
      patternProperties: {
        [UUID_PATTERN]: {
          type: 'object',
          properties: {
            generation: {type: 'integer'},
            resources: {
              type: 'object',
              minProperties: 1,
              patternProperties: {
                [RC_PATTERN]: {type: 'integer', minimum: 1},
              },
              additionalProperties: false,
            },
          },
          required: ['resources'],
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
    project_id: {type: 'string', minLength: 1, maxLength: 255},
    user_id: {type: 'string', minLength: 1, maxLength: 255},
  },
  additionalProperties: false,
  required: ['allocations', 'project_id', 'user_id'],
}

/** ALLOCATIONS_PUT_1_12 with empty allocations allowed: one consumer's entry in POST /allocations 1.13-1.27. */
export const DELETABLE_ALLOCATIONS: S = (() => {
  const s = clone(ALLOCATIONS_PUT_1_12)
  ;((s.properties as S).allocations as S).minProperties = 0
  return s
})()

/** POST /allocations body, 1.13-1.27: {consumer_uuid: DELETABLE_ALLOCATIONS}. */
export const ALLOCATIONS_POST_1_13: S = {
  type: 'object',
  minProperties: 1,
  additionalProperties: false,
  patternProperties: {
    [UUID_PATTERN]: DELETABLE_ALLOCATIONS,
  },
}

const CONSUMER_GENERATION = {type: ['integer', 'null'], additionalProperties: false}

/** PUT /allocations/{consumer_uuid} body, 1.28-1.33: adds required consumer_generation (int or null); empty allocations allowed. */
export const ALLOCATIONS_PUT_1_28: S = (() => {
  const s = clone(DELETABLE_ALLOCATIONS)
  ;(s.properties as S).consumer_generation = clone(CONSUMER_GENERATION)
  ;(s.required as string[]).push('consumer_generation')
  return s
})()

/** POST /allocations body, 1.28-1.33: each consumer also requires consumer_generation. */
export const ALLOCATIONS_POST_1_28: S = (() => {
  const s = clone(ALLOCATIONS_POST_1_13)
  s.patternProperties = {[UUID_PATTERN]: clone(ALLOCATIONS_PUT_1_28)}
  return s
})()

/** The optional "mappings" member (1.34+): request group suffix -> non-empty list of provider uuids. */
export const MAPPINGS: S = {
  type: 'object',
  minProperties: 1,
  patternProperties: {
    [GROUP_PAT_1_33]: {
      type: 'array',
      minItems: 1,
      items: {type: 'string', format: 'uuid'},
    },
  },
}

/** PUT /allocations/{consumer_uuid} body, 1.34-1.37: adds optional mappings. */
export const ALLOCATIONS_PUT_1_34: S = (() => {
  const s = clone(ALLOCATIONS_PUT_1_28)
  ;(s.properties as S).mappings = clone(MAPPINGS)
  return s
})()

/** POST /allocations body, 1.34-1.37. */
export const ALLOCATIONS_POST_1_34: S = (() => {
  const s = clone(ALLOCATIONS_POST_1_28)
  s.patternProperties = {[UUID_PATTERN]: clone(ALLOCATIONS_PUT_1_34)}
  return s
})()

/** PUT /allocations/{consumer_uuid} body, 1.38+: adds required consumer_type. */
export const ALLOCATIONS_PUT_1_38: S = (() => {
  const s = clone(ALLOCATIONS_PUT_1_34)
  ;(s.properties as S).consumer_type = {
    type: 'string',
    pattern: CONSUMER_TYPE_PATTERN,
    minLength: 1,
    maxLength: 255,
  }
  ;(s.required as string[]).push('consumer_type')
  return s
})()

/** POST /allocations body, 1.38+. */
export const ALLOCATIONS_POST_1_38: S = (() => {
  const s = clone(ALLOCATIONS_POST_1_34)
  s.patternProperties = {[UUID_PATTERN]: clone(ALLOCATIONS_PUT_1_38)}
  return s
})()

export const allocationsPutSchema = (v: VersionLike): S =>
  v.gte(38)
    ? ALLOCATIONS_PUT_1_38
    : v.gte(34)
      ? ALLOCATIONS_PUT_1_34
      : v.gte(28)
        ? ALLOCATIONS_PUT_1_28
        : v.gte(12)
          ? ALLOCATIONS_PUT_1_12
          : v.gte(8)
            ? ALLOCATIONS_PUT_1_8
            : ALLOCATIONS_PUT_1_0

/** POST /allocations exists from 1.13. */
export const allocationsPostSchema = (v: VersionLike): S =>
  v.gte(38)
    ? ALLOCATIONS_POST_1_38
    : v.gte(34)
      ? ALLOCATIONS_POST_1_34
      : v.gte(28)
        ? ALLOCATIONS_POST_1_28
        : ALLOCATIONS_POST_1_13

// ---------------------------------------------------------------------------
// reshaper.py
// ---------------------------------------------------------------------------

const reshaperAllocations = (post: S): S => {
  const s = clone(post)
  s.minProperties = 0
  return s
}

/** POST /reshaper body, 1.30-1.33: inventories per provider (non-empty) and allocations (may be empty). */
export const RESHAPER_POST_1_30: S = {
  type: 'object',
  properties: {
    inventories: {
      type: 'object',
      patternProperties: {
        [UUID_PATTERN]: INVENTORIES_PUT,
      },
      minProperties: 1,
      additionalProperties: false,
    },
    allocations: reshaperAllocations(ALLOCATIONS_POST_1_28),
  },
  required: ['inventories', 'allocations'],
  additionalProperties: false,
}

/** POST /reshaper body, 1.34-1.37: allocations as POST /allocations 1.34 (mappings allowed). */
export const RESHAPER_POST_1_34: S = (() => {
  const s = clone(RESHAPER_POST_1_30)
  ;(s.properties as S).allocations = reshaperAllocations(ALLOCATIONS_POST_1_34)
  return s
})()

/** POST /reshaper body, 1.38+: allocations as POST /allocations 1.38 (consumer_type required). */
export const RESHAPER_POST_1_38: S = (() => {
  const s = clone(RESHAPER_POST_1_34)
  ;(s.properties as S).allocations = reshaperAllocations(ALLOCATIONS_POST_1_38)
  return s
})()

export const reshaperPostSchema = (v: VersionLike): S =>
  v.gte(38) ? RESHAPER_POST_1_38 : v.gte(34) ? RESHAPER_POST_1_34 : RESHAPER_POST_1_30

// ---------------------------------------------------------------------------
// usage.py
// ---------------------------------------------------------------------------

/** GET /usages query, 1.9-1.37: project_id (required), user_id. */
export const USAGES_GET_QUERY_1_9: S = {
  type: 'object',
  properties: {
    project_id: {type: 'string', minLength: 1, maxLength: 255},
    user_id: {type: 'string', minLength: 1, maxLength: 255},
  },
  required: ['project_id'],
  additionalProperties: false,
}

/** GET /usages query, 1.38+: adds consumer_type. */
export const USAGES_GET_QUERY_1_38: S = (() => {
  const s = clone(USAGES_GET_QUERY_1_9)
  ;(s.properties as S).consumer_type = {
    type: 'string',
    pattern: CONSUMER_TYPE_GET_PATTERN,
    minLength: 1,
    maxLength: 255,
  }
  return s
})()

export const usagesGetQuerySchema = (v: VersionLike): S => (v.gte(38) ? USAGES_GET_QUERY_1_38 : USAGES_GET_QUERY_1_9)

// ---------------------------------------------------------------------------
// allocation_candidate.py
// ---------------------------------------------------------------------------

/** GET /allocation_candidates query, 1.10-1.15: resources (required). */
export const ALLOCATION_CANDIDATES_GET_QUERY_1_10: S = {
  type: 'object',
  properties: {
    resources: {type: 'string'},
  },
  required: ['resources'],
  additionalProperties: false,
}

/** GET /allocation_candidates query, 1.16: adds limit. */
export const ALLOCATION_CANDIDATES_GET_QUERY_1_16: S = (() => {
  const s = clone(ALLOCATION_CANDIDATES_GET_QUERY_1_10)
  ;(s.properties as S).limit = {
    type: ['integer', 'string'],
    pattern: '^[1-9][0-9]*$',
    minimum: 1,
    minLength: 1,
  }
  return s
})()

/** GET /allocation_candidates query, 1.17-1.20: adds required. */
export const ALLOCATION_CANDIDATES_GET_QUERY_1_17: S = (() => {
  const s = clone(ALLOCATION_CANDIDATES_GET_QUERY_1_16)
  ;(s.properties as S).required = {type: ['string']}
  return s
})()

/** GET /allocation_candidates query, 1.21-1.24: adds member_of. */
export const ALLOCATION_CANDIDATES_GET_QUERY_1_21: S = (() => {
  const s = clone(ALLOCATION_CANDIDATES_GET_QUERY_1_17)
  ;(s.properties as S).member_of = {type: ['string']}
  return s
})()

const groupPat = (name: string, suffix: string) => `^${name}(${suffix})?$`

/**
 * GET /allocation_candidates query, 1.25-1.30: granular groups; resources,
 * required, member_of become numbered-suffix patternProperties (none required),
 * adds group_policy.
 */
export const ALLOCATION_CANDIDATES_GET_QUERY_1_25: S = {
  type: 'object',
  properties: {
    limit: clone((ALLOCATION_CANDIDATES_GET_QUERY_1_21.properties as S).limit),
    group_policy: {type: 'string', enum: ['none', 'isolate']},
  },
  additionalProperties: false,
  patternProperties: {
    [groupPat('resources', GROUP_PAT)]: {type: 'string'},
    [groupPat('required', GROUP_PAT)]: {type: 'string'},
    [groupPat('member_of', GROUP_PAT)]: {type: 'string'},
  },
}

/** GET /allocation_candidates query, 1.31-1.32: adds in_tree<N>. */
export const ALLOCATION_CANDIDATES_GET_QUERY_1_31: S = (() => {
  const s = clone(ALLOCATION_CANDIDATES_GET_QUERY_1_25)
  ;(s.patternProperties as S)[groupPat('in_tree', GROUP_PAT)] = {type: 'string'}
  return s
})()

/** GET /allocation_candidates query, 1.33-1.34: group suffixes become [a-zA-Z0-9_-]{1,64}. */
export const ALLOCATION_CANDIDATES_GET_QUERY_1_33: S = (() => {
  const s = clone(ALLOCATION_CANDIDATES_GET_QUERY_1_31)
  s.patternProperties = Object.fromEntries(
    ['resources', 'required', 'member_of', 'in_tree'].map((g) => [groupPat(g, GROUP_PAT_1_33), {type: 'string'}]),
  )
  return s
})()

/** GET /allocation_candidates query, 1.35: adds root_required. */
export const ALLOCATION_CANDIDATES_GET_QUERY_1_35: S = (() => {
  const s = clone(ALLOCATION_CANDIDATES_GET_QUERY_1_33)
  ;(s.properties as S).root_required = {type: ['string']}
  return s
})()

/** GET /allocation_candidates query, 1.36+: adds same_subtree. */
export const ALLOCATION_CANDIDATES_GET_QUERY_1_36: S = (() => {
  const s = clone(ALLOCATION_CANDIDATES_GET_QUERY_1_35)
  ;(s.properties as S).same_subtree = {type: ['string']}
  return s
})()

/** GET /allocation_candidates exists from 1.10. */
export const allocationCandidatesGetQuerySchema = (v: VersionLike): S =>
  v.gte(36)
    ? ALLOCATION_CANDIDATES_GET_QUERY_1_36
    : v.gte(35)
      ? ALLOCATION_CANDIDATES_GET_QUERY_1_35
      : v.gte(33)
        ? ALLOCATION_CANDIDATES_GET_QUERY_1_33
        : v.gte(31)
          ? ALLOCATION_CANDIDATES_GET_QUERY_1_31
          : v.gte(25)
            ? ALLOCATION_CANDIDATES_GET_QUERY_1_25
            : v.gte(21)
              ? ALLOCATION_CANDIDATES_GET_QUERY_1_21
              : v.gte(17)
                ? ALLOCATION_CANDIDATES_GET_QUERY_1_17
                : v.gte(16)
                  ? ALLOCATION_CANDIDATES_GET_QUERY_1_16
                  : ALLOCATION_CANDIDATES_GET_QUERY_1_10

/** Every schema above is immutable: derive new ones with structuredClone. */
function deepFreeze(v: unknown): void {
  if (typeof v !== 'object' || v === null || Object.isFrozen(v)) return
  Object.freeze(v)
  for (const child of Object.values(v)) deepFreeze(child)
}
for (const s of [
  RESOURCE_PROVIDER_POST_1_0,
  RESOURCE_PROVIDER_PUT_1_0,
  RESOURCE_PROVIDER_POST_1_14,
  RESOURCE_PROVIDER_PUT_1_14,
  RESOURCE_PROVIDERS_GET_QUERY_1_0,
  RESOURCE_PROVIDERS_GET_QUERY_1_3,
  RESOURCE_PROVIDERS_GET_QUERY_1_4,
  RESOURCE_PROVIDERS_GET_QUERY_1_14,
  RESOURCE_PROVIDERS_GET_QUERY_1_18,
  INVENTORY_PUT_SINGLE,
  INVENTORY_POST,
  INVENTORY_RECORD,
  INVENTORIES_PUT,
  AGGREGATES_PUT_1_1,
  AGGREGATES_PUT_1_19,
  TRAIT,
  CUSTOM_TRAIT,
  PUT_TRAITS_SCHEMA,
  RESOURCE_PROVIDER_TRAITS_PUT,
  TRAITS_GET_QUERY,
  RESOURCE_CLASS_POST,
  RESOURCE_CLASS_PUT,
  ALLOCATIONS_PUT_1_0,
  ALLOCATIONS_PUT_1_8,
  ALLOCATIONS_PUT_1_12,
  DELETABLE_ALLOCATIONS,
  ALLOCATIONS_POST_1_13,
  ALLOCATIONS_PUT_1_28,
  ALLOCATIONS_POST_1_28,
  MAPPINGS,
  ALLOCATIONS_PUT_1_34,
  ALLOCATIONS_POST_1_34,
  ALLOCATIONS_PUT_1_38,
  ALLOCATIONS_POST_1_38,
  RESHAPER_POST_1_30,
  RESHAPER_POST_1_34,
  RESHAPER_POST_1_38,
  USAGES_GET_QUERY_1_9,
  USAGES_GET_QUERY_1_38,
  ALLOCATION_CANDIDATES_GET_QUERY_1_10,
  ALLOCATION_CANDIDATES_GET_QUERY_1_16,
  ALLOCATION_CANDIDATES_GET_QUERY_1_17,
  ALLOCATION_CANDIDATES_GET_QUERY_1_21,
  ALLOCATION_CANDIDATES_GET_QUERY_1_25,
  ALLOCATION_CANDIDATES_GET_QUERY_1_31,
  ALLOCATION_CANDIDATES_GET_QUERY_1_33,
  ALLOCATION_CANDIDATES_GET_QUERY_1_35,
  ALLOCATION_CANDIDATES_GET_QUERY_1_36,
]) {
  deepFreeze(s)
}

// ---------------------------------------------------------------------------
// placemat's own API (under /placemat/v1): not part of Placement
// ---------------------------------------------------------------------------

const PROVIDER_REF = {type: 'string', format: 'uuid'}
const prop = (schema: S, key: string) => (schema.properties as Record<string, unknown>)[key]
const NULLABLE_PARENT = {anyOf: [{type: 'string', format: 'uuid'}, {type: 'null'}]}
const opSchema = (op: string, properties: Record<string, unknown>, required: string[]): S => ({
  type: 'object',
  properties: {op: {enum: [op]}, ...properties},
  required: ['op', ...required],
  additionalProperties: false,
})

/** One schema per batch operation, keyed by its `op`. */
export const BATCH_OPERATIONS: Record<string, S> = {
  ensure_resource_class: opSchema('ensure_resource_class', {name: prop(RESOURCE_CLASS_POST, 'name')}, ['name']),
  ensure_trait: opSchema('ensure_trait', {name: CUSTOM_TRAIT}, ['name']),
  create_provider: opSchema(
    'create_provider',
    {uuid: PROVIDER_REF, name: {type: 'string', minLength: 1, maxLength: 200}, parent_provider_uuid: NULLABLE_PARENT},
    ['uuid', 'name'],
  ),
  update_provider: opSchema(
    'update_provider',
    {uuid: PROVIDER_REF, name: {type: 'string', minLength: 1, maxLength: 200}, parent_provider_uuid: NULLABLE_PARENT},
    ['uuid'],
  ),
  delete_provider: opSchema('delete_provider', {uuid: PROVIDER_REF}, ['uuid']),
  set_inventories: opSchema(
    'set_inventories',
    {uuid: PROVIDER_REF, inventories: prop(INVENTORIES_PUT, 'inventories'), generation: {type: 'integer'}},
    ['uuid', 'inventories'],
  ),
  set_traits: opSchema(
    'set_traits',
    {uuid: PROVIDER_REF, traits: prop(RESOURCE_PROVIDER_TRAITS_PUT, 'traits'), generation: {type: 'integer'}},
    ['uuid', 'traits'],
  ),
  set_aggregates: opSchema(
    'set_aggregates',
    {uuid: PROVIDER_REF, aggregates: AGGREGATES_LIST, generation: {type: 'integer'}},
    ['uuid', 'aggregates'],
  ),
  set_aggregate_names: opSchema(
    'set_aggregate_names',
    {
      names: {
        type: 'array',
        items: {
          type: 'object',
          properties: {uuid: {type: 'string', format: 'uuid'}, name: {type: 'string', minLength: 1, maxLength: 255}},
          required: ['uuid', 'name'],
          additionalProperties: false,
        },
      },
      forget: AGGREGATES_LIST,
    },
    [],
  ),
  // The body itself is then checked against reshaperPostSchema at that microversion.
  reshape: opSchema(
    'reshape',
    {microversion: {type: 'string', pattern: '^1\\.(3[0-9])$'}, inventories: {type: 'object'}, allocations: {type: 'object'}},
    ['microversion', 'inventories', 'allocations'],
  ),
}

/** GET /placemat/v1/consumers: the filters of `placemat consumer list`. */
export const CONSUMERS_QUERY: S = {
  type: 'object',
  properties: {
    in_tree: {type: 'string', format: 'uuid'},
    project_id: {type: 'string', minLength: 1, maxLength: 255},
    group: {type: 'string', minLength: 1, maxLength: 200},
  },
  additionalProperties: false,
}

/** POST /placemat/v1/batch envelope (each operation is then checked against BATCH_OPERATIONS). */
export const BATCH_POST: S = {
  type: 'object',
  properties: {operations: {type: 'array', items: {type: 'object', required: ['op']}}},
  required: ['operations'],
  additionalProperties: false,
}

const TOPOLOGY_NAME = {type: 'string', minLength: 1, maxLength: 255}
const RACK_LAYOUT = {
  type: 'object',
  properties: {name: TOPOLOGY_NAME, hosts: {type: 'array', items: {type: 'string', minLength: 1}}},
  required: ['name'],
  additionalProperties: false,
}
const ROW_LAYOUT = {
  type: 'object',
  properties: {name: TOPOLOGY_NAME, racks: {type: 'array', items: RACK_LAYOUT}},
  required: ['name'],
  additionalProperties: false,
}

/** PUT /placemat/v1/topology/layout: rooms > rows > racks > hosts (rows and racks may stand alone). */
export const TOPOLOGY_LAYOUT_PUT: S = {
  type: 'object',
  properties: {
    generation: {type: 'integer'},
    rooms: {
      type: 'array',
      items: {
        type: 'object',
        properties: {name: TOPOLOGY_NAME, rows: {type: 'array', items: ROW_LAYOUT}},
        required: ['name'],
        additionalProperties: false,
      },
    },
    rows: {type: 'array', items: ROW_LAYOUT},
    racks: {type: 'array', items: RACK_LAYOUT},
  },
  additionalProperties: false,
}

const withoutKey = (o: Record<string, unknown>, key: string) => Object.fromEntries(Object.entries(o).filter(([k]) => k !== key))

// A layout in a batch (apply_layout): the layout document without its generation, which the operation carries.
BATCH_OPERATIONS.apply_layout = opSchema(
  'apply_layout',
  {
    layout: {...TOPOLOGY_LAYOUT_PUT, properties: withoutKey(TOPOLOGY_LAYOUT_PUT.properties as Record<string, unknown>, 'generation')},
    prune: {type: 'boolean'},
    generation: {type: 'integer'},
  },
  ['layout'],
)

/** One claim of POST /placemat/v1/claims: a consumer's allocations plus topology rules checked at write time. */
/** A placement group's name. */
const GROUP_NAME = {type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$'}

export const CLAIM: S = {
  type: 'object',
  properties: {
    consumer_uuid: {type: 'string', format: 'uuid'},
    project_id: {type: 'string', minLength: 1, maxLength: 255},
    user_id: {type: 'string', minLength: 1, maxLength: 255},
    consumer_type: {type: 'string', pattern: CONSUMER_TYPE_PATTERN, minLength: 1, maxLength: 255},
    consumer_generation: {type: ['integer', 'null']},
    allocations: clone((ALLOCATIONS_PUT_1_12.properties as S).allocations),
    affinity: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          relation: {enum: ['same', 'different']},
          level: {enum: ['rack', 'row', 'room']},
          consumer: {type: 'string', format: 'uuid'},
        },
        required: ['relation', 'level', 'consumer'],
        additionalProperties: false,
      },
    },
    group: GROUP_NAME,
  },
  required: ['consumer_uuid', 'project_id', 'user_id', 'consumer_generation', 'allocations'],
  additionalProperties: false,
}

const CONSUMER_LIST = {type: 'array', items: {type: 'string', format: 'uuid'}, maxItems: 100000}

/** POST /placemat/v1/groups (the numbers a policy needs are checked by the domain). */
export const GROUP_POST: S = {
  type: 'object',
  properties: {
    name: GROUP_NAME,
    policy: {enum: ['affinity', 'anti-affinity', 'max-per', 'spread']},
    level: {enum: ['host', 'rack', 'row', 'room']},
    max_per: {type: 'integer', minimum: 1},
    max_skew: {type: 'integer', minimum: 1},
    soft: {type: 'boolean'},
    members: CONSUMER_LIST,
  },
  required: ['name', 'policy', 'level'],
  additionalProperties: false,
}

/** POST /placemat/v1/groups/check: consumers placed on providers, as a write would place them. */
export const GROUP_CHECK_POST: S = {
  type: 'object',
  properties: {
    placements: {
      type: 'object',
      patternProperties: {'^[0-9a-fA-F-]{36}$': {type: 'array', items: {type: 'string', format: 'uuid'}, maxItems: 1000}},
      additionalProperties: false,
    },
  },
  required: ['placements'],
  additionalProperties: false,
}

/** POST /placemat/v1/groups/{name}/members */
export const GROUP_MEMBERS_POST: S = {
  type: 'object',
  properties: {add: CONSUMER_LIST, remove: CONSUMER_LIST, generation: {type: 'integer'}},
  additionalProperties: false,
}

/** POST /placemat/v1/moves: a consumer's allocations to another consumer. */
export const MOVE_POST: S = {
  type: 'object',
  properties: {
    consumer_uuid: {type: 'string', format: 'uuid'},
    to: {type: 'string', format: 'uuid'},
    consumer_type: {type: 'string', pattern: CONSUMER_TYPE_PATTERN, minLength: 1, maxLength: 255},
    consumer_generation: {type: 'integer'},
    to_generation: {type: ['integer', 'null']},
  },
  required: ['consumer_uuid', 'to'],
  additionalProperties: false,
}

/** POST /placemat/v1/claims with several consumers, written in one transaction. */
export const CLAIMS_BATCH: S = {
  type: 'object',
  properties: {claims: {type: 'array', minItems: 1, items: CLAIM}},
  required: ['claims'],
  additionalProperties: false,
}

/** PUT /placemat/v1/hosts/{uuid}/status: a host out of service (with why) or back in. */
export const HOST_STATUS_PUT: S = {
  type: 'object',
  properties: {
    disabled: {type: 'boolean'},
    reason: {type: ['string', 'null'], maxLength: 255},
    resource_provider_generation: {type: 'integer'},
  },
  required: ['disabled'],
  additionalProperties: false,
}
