/** placement/schemas/trait.py: traits, and the traits of a resource provider. */
import {CUSTOM_TRAIT_PATTERN, clone, deepFreeze, type S, type Schema} from './common.js'

/** PUT /resource_providers/{uuid}/traits (1.6+). */
export interface ResourceProviderTraitsPutBody {
  traits: string[]
  resource_provider_generation: number
}

/** A trait name in PUT /resource_providers/{uuid}/traits. */
export const TRAIT: Schema<string> = {type: 'string', minLength: 1, maxLength: 255}

/**
 * PUT /traits/{name} (1.6+): the path's name, validated without a format
 * checker; failure gives Placement's fixed "The trait is invalid. ..." message.
 */
export const CUSTOM_TRAIT: Schema<string> = {...clone(TRAIT), pattern: CUSTOM_TRAIT_PATTERN}

/** Placement defines this ({traits: [custom traits]}) but no 8.0.0 handler uses it. */
export const PUT_TRAITS_SCHEMA: Schema<{traits: string[]}> = {
  type: 'object',
  properties: {
    traits: {type: 'array', items: CUSTOM_TRAIT},
  },
  required: ['traits'],
  additionalProperties: false,
}

/** PUT /resource_providers/{uuid}/traits body (1.6+). */
export const RESOURCE_PROVIDER_TRAITS_PUT: Schema<ResourceProviderTraitsPutBody> = (() => {
  const s: S = clone(PUT_TRAITS_SCHEMA)
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

deepFreeze(TRAIT, CUSTOM_TRAIT, PUT_TRAITS_SCHEMA, RESOURCE_PROVIDER_TRAITS_PUT, TRAITS_GET_QUERY)
