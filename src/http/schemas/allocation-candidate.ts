/** placement/schemas/allocation_candidate.py: GET /allocation_candidates' query. */
import {GROUP_PAT, GROUP_PAT_1_33, clone, deepFreeze, type S, type VersionLike} from './common.js'

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

deepFreeze(
  ALLOCATION_CANDIDATES_GET_QUERY_1_10,
  ALLOCATION_CANDIDATES_GET_QUERY_1_16,
  ALLOCATION_CANDIDATES_GET_QUERY_1_17,
  ALLOCATION_CANDIDATES_GET_QUERY_1_21,
  ALLOCATION_CANDIDATES_GET_QUERY_1_25,
  ALLOCATION_CANDIDATES_GET_QUERY_1_31,
  ALLOCATION_CANDIDATES_GET_QUERY_1_33,
  ALLOCATION_CANDIDATES_GET_QUERY_1_35,
  ALLOCATION_CANDIDATES_GET_QUERY_1_36,
)
