/**
 * Placement's policy defaults, in the two generations a cloud may expect: 8.0.0's (Zed and
 * before: system-scoped admins and readers) and 15.0.0's (9.0.0 onwards: project-scoped, the
 * `admin` or `service` role), each with its rule names, check strings, scope types and the
 * deprecated default the base rules fall back to while new defaults are not enforced
 * (placement/policies/*.py of each release); and which rule each route asks. placemat's own
 * routes (/placemat/v1) have two rules of their own, in each generation's terms.
 */

export interface RuleDefault {
  check: string
  /** Scope types a token must have when scope is enforced (none: any). */
  scope?: Array<'system' | 'project'>
  /** The old default, or'ed in while enforce_new_defaults is off. */
  deprecated?: string
}

/** The releases whose defaults the daemon can enforce (`--policy-defaults`); the first is the default. */
export const POLICY_GENERATIONS = ['15.0.0', '8.0.0'] as const
export type PolicyGeneration = (typeof POLICY_GENERATIONS)[number]

type Scope = Array<'system' | 'project'>
const SYSTEM: Scope = ['system']
const PROJECT: Scope = ['project']
/** Placement's DEPRECATED_ADMIN_POLICY (rule admin_api's old check), from before secure RBAC. */
const OLD_ADMIN = 'role:admin'

/** Every Placement rule (but the base ones) with the same check and scope. */
function placementRules(check: string, scope: Scope, except: Record<string, RuleDefault> = {}): Record<string, RuleDefault> {
  const out: Record<string, RuleDefault> = {}
  for (const name of new Set(Object.values(ROUTE_RULES))) out[name] = except[name] ?? {check, scope}
  return out
}

function rules8(): Record<string, RuleDefault> {
  const reader = 'rule:system_reader_api'
  const admin = 'rule:system_admin_api'
  const readers = Object.fromEntries(
    Object.values(ROUTE_RULES)
      .filter((n) => /:(list|show|usages)$/.test(n))
      .map((n) => [n, {check: reader, scope: SYSTEM}]),
  )
  return {
    admin_api: {check: 'role:admin', scope: SYSTEM},
    system_admin_api: {check: 'role:admin and system_scope:all', deprecated: OLD_ADMIN},
    system_reader_api: {check: 'role:reader and system_scope:all', deprecated: OLD_ADMIN},
    project_reader_api: {check: 'role:reader and project_id:%(project_id)s', deprecated: OLD_ADMIN},
    system_or_project_reader: {check: 'rule:system_reader_api or rule:project_reader_api', deprecated: OLD_ADMIN},
    ...placementRules(admin, SYSTEM, {
      ...readers,
      'placement:usages': {check: 'rule:system_or_project_reader', scope: ['system', 'project']},
    }),
    // placemat's own API: reading it is a reader's, changing it an admin's, as for Placement's.
    'placemat:read': {check: reader, scope: SYSTEM},
    'placemat:write': {check: admin, scope: SYSTEM},
  }
}

function rules15(): Record<string, RuleDefault> {
  return {
    admin_api: {check: 'role:admin', scope: PROJECT},
    service_api: {check: 'role:service', scope: PROJECT, deprecated: OLD_ADMIN},
    admin_or_service_api: {check: 'role:admin or role:service', scope: PROJECT, deprecated: OLD_ADMIN},
    project_reader_api: {check: 'role:reader and project_id:%(project_id)s', deprecated: OLD_ADMIN},
    admin_or_project_reader_or_service_api: {
      check: 'role:admin or rule:project_reader_api or role:service',
      scope: PROJECT,
      deprecated: OLD_ADMIN,
    },
    ...placementRules('rule:admin_or_service_api', PROJECT, {
      'placement:usages': {check: 'rule:admin_or_project_reader_or_service_api', scope: PROJECT},
      'placement:reshaper:reshape': {check: 'rule:service_api', scope: PROJECT},
    }),
    // placemat's own API: read as Placement's is (an admin or a service); the topology and the
    // placement groups are the operator's to change.
    'placemat:read': {check: 'rule:admin_or_service_api', scope: PROJECT},
    'placemat:write': {check: 'rule:admin_api', scope: PROJECT},
  }
}

/** The default rules of a generation. */
export function defaultRules(generation: PolicyGeneration): Record<string, RuleDefault> {
  return generation === '8.0.0' ? rules8() : rules15()
}

const RP = '/resource_providers/:uuid'

/** The rule each Placement route asks, by "METHOD path" (fastify's path syntax). */
export const ROUTE_RULES: Record<string, string> = {
  'GET /resource_providers': 'placement:resource_providers:list',
  'POST /resource_providers': 'placement:resource_providers:create',
  [`GET ${RP}`]: 'placement:resource_providers:show',
  [`PUT ${RP}`]: 'placement:resource_providers:update',
  [`DELETE ${RP}`]: 'placement:resource_providers:delete',
  [`GET ${RP}/inventories`]: 'placement:resource_providers:inventories:list',
  [`POST ${RP}/inventories`]: 'placement:resource_providers:inventories:create',
  [`PUT ${RP}/inventories`]: 'placement:resource_providers:inventories:update',
  [`DELETE ${RP}/inventories`]: 'placement:resource_providers:inventories:delete',
  [`GET ${RP}/inventories/:resource_class`]: 'placement:resource_providers:inventories:show',
  [`PUT ${RP}/inventories/:resource_class`]: 'placement:resource_providers:inventories:update',
  [`DELETE ${RP}/inventories/:resource_class`]: 'placement:resource_providers:inventories:delete',
  [`GET ${RP}/aggregates`]: 'placement:resource_providers:aggregates:list',
  [`PUT ${RP}/aggregates`]: 'placement:resource_providers:aggregates:update',
  [`GET ${RP}/traits`]: 'placement:resource_providers:traits:list',
  [`PUT ${RP}/traits`]: 'placement:resource_providers:traits:update',
  [`DELETE ${RP}/traits`]: 'placement:resource_providers:traits:delete',
  [`GET ${RP}/usages`]: 'placement:resource_providers:usages',
  [`GET ${RP}/allocations`]: 'placement:resource_providers:allocations:list',
  'GET /usages': 'placement:usages',
  'GET /traits': 'placement:traits:list',
  'GET /traits/:name': 'placement:traits:show',
  'PUT /traits/:name': 'placement:traits:update',
  'DELETE /traits/:name': 'placement:traits:delete',
  'GET /resource_classes': 'placement:resource_classes:list',
  'POST /resource_classes': 'placement:resource_classes:create',
  'GET /resource_classes/:name': 'placement:resource_classes:show',
  'PUT /resource_classes/:name': 'placement:resource_classes:update',
  'DELETE /resource_classes/:name': 'placement:resource_classes:delete',
  'GET /allocations/:consumer_uuid': 'placement:allocations:list',
  'PUT /allocations/:consumer_uuid': 'placement:allocations:update',
  'DELETE /allocations/:consumer_uuid': 'placement:allocations:delete',
  'POST /allocations': 'placement:allocations:manage',
  'GET /allocation_candidates': 'placement:allocation_candidates:list',
  'POST /reshaper': 'placement:reshaper:reshape',
}

/** The rule a route asks: Placement's, or placemat's read or write rule for its own routes. */
export function ruleOfRoute(method: string, url: string): string {
  return ROUTE_RULES[`${method} ${url}`] ?? (method === 'GET' ? 'placemat:read' : 'placemat:write')
}
