/** placement/schemas/resource_provider.py: POST, PUT and GET /resource_providers. */
import {clone, deepFreeze, type S, type Schema, type VersionLike} from './common.js'

/** POST /resource_providers (parent_provider_uuid from 1.14). */
export interface ResourceProviderPostBody {
  name: string
  uuid?: string
  parent_provider_uuid?: string | null
}

/** PUT /resource_providers/{uuid} (parent_provider_uuid from 1.14). */
export interface ResourceProviderPutBody {
  name: string
  parent_provider_uuid?: string | null
}

/** POST /resource_providers body, 1.0-1.13. */
export const RESOURCE_PROVIDER_POST_1_0: Schema<ResourceProviderPostBody> = {
  type: 'object',
  properties: {
    name: {type: 'string', maxLength: 200},
    uuid: {type: 'string', format: 'uuid'},
  },
  required: ['name'],
  additionalProperties: false,
}

/** PUT /resource_providers/{uuid} body, 1.0-1.13. */
export const RESOURCE_PROVIDER_PUT_1_0: Schema<ResourceProviderPutBody> = (() => {
  const s: S = clone(RESOURCE_PROVIDER_POST_1_0)
  delete (s.properties as S).uuid
  return s
})()

const PARENT_PROVIDER_UUID = {
  anyOf: [{type: 'string', format: 'uuid'}, {type: 'null'}],
}

/** POST /resource_providers body, 1.14+ (adds parent_provider_uuid: uuid or null). */
export const RESOURCE_PROVIDER_POST_1_14: Schema<ResourceProviderPostBody> = (() => {
  const s = clone(RESOURCE_PROVIDER_POST_1_0)
  ;(s.properties as S).parent_provider_uuid = clone(PARENT_PROVIDER_UUID)
  return s
})()

/** PUT /resource_providers/{uuid} body, 1.14+ (name, parent_provider_uuid). */
export const RESOURCE_PROVIDER_PUT_1_14: Schema<ResourceProviderPutBody> = (() => {
  const s: S = clone(RESOURCE_PROVIDER_POST_1_14)
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

export const resourceProviderPostSchema = (v: VersionLike): Schema<ResourceProviderPostBody> =>
  v.gte(14) ? RESOURCE_PROVIDER_POST_1_14 : RESOURCE_PROVIDER_POST_1_0

export const resourceProviderPutSchema = (v: VersionLike): Schema<ResourceProviderPutBody> =>
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

deepFreeze(
  RESOURCE_PROVIDER_POST_1_0,
  RESOURCE_PROVIDER_PUT_1_0,
  RESOURCE_PROVIDER_POST_1_14,
  RESOURCE_PROVIDER_PUT_1_14,
  RESOURCE_PROVIDERS_GET_QUERY_1_0,
  RESOURCE_PROVIDERS_GET_QUERY_1_3,
  RESOURCE_PROVIDERS_GET_QUERY_1_4,
  RESOURCE_PROVIDERS_GET_QUERY_1_14,
  RESOURCE_PROVIDERS_GET_QUERY_1_18,
)
