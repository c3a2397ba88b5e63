/**
 * Placement 8.0.0's policy: its rule names, default check strings and scope types
 * (placement/policies/*.py), the deprecated default the base rules fall back to while new
 * defaults are not enforced, and which rule each route asks. placemat's own routes
 * (/placemat/v1) have two rules of their own, defaulting to Placement's reader and admin.
 */

export interface RuleDefault {
  check: string
  /** Scope types a token must have when scope is enforced (none: any). */
  scope?: Array<'system' | 'project'>
  /** The old default, or'ed in while enforce_new_defaults is off. */
  deprecated?: string
}

const SYSTEM_ADMIN = 'rule:system_admin_api'
const SYSTEM_READER = 'rule:system_reader_api'
const SYSTEM = ['system'] as Array<'system' | 'project'>
/** Placement's DEPRECATED_ADMIN_POLICY, before secure RBAC. */
const OLD_ADMIN = 'role:admin'

export const DEFAULT_RULES: Record<string, RuleDefault> = {
  admin_api: {check: 'role:admin', scope: SYSTEM},
  system_admin_api: {check: 'role:admin and system_scope:all', deprecated: OLD_ADMIN},
  system_reader_api: {check: 'role:reader and system_scope:all', deprecated: OLD_ADMIN},
  project_reader_api: {check: 'role:reader and project_id:%(project_id)s', deprecated: OLD_ADMIN},
  system_or_project_reader: {check: 'rule:system_reader_api or rule:project_reader_api', deprecated: OLD_ADMIN},

  'placement:resource_providers:list': {check: SYSTEM_READER, scope: SYSTEM},
  'placement:resource_providers:create': {check: SYSTEM_ADMIN, scope: SYSTEM},
  'placement:resource_providers:show': {check: SYSTEM_READER, scope: SYSTEM},
  'placement:resource_providers:update': {check: SYSTEM_ADMIN, scope: SYSTEM},
  'placement:resource_providers:delete': {check: SYSTEM_ADMIN, scope: SYSTEM},
  'placement:resource_providers:inventories:list': {check: SYSTEM_READER, scope: SYSTEM},
  'placement:resource_providers:inventories:create': {check: SYSTEM_ADMIN, scope: SYSTEM},
  'placement:resource_providers:inventories:show': {check: SYSTEM_READER, scope: SYSTEM},
  'placement:resource_providers:inventories:update': {check: SYSTEM_ADMIN, scope: SYSTEM},
  'placement:resource_providers:inventories:delete': {check: SYSTEM_ADMIN, scope: SYSTEM},
  'placement:resource_providers:aggregates:list': {check: SYSTEM_READER, scope: SYSTEM},
  'placement:resource_providers:aggregates:update': {check: SYSTEM_ADMIN, scope: SYSTEM},
  'placement:resource_providers:traits:list': {check: SYSTEM_READER, scope: SYSTEM},
  'placement:resource_providers:traits:update': {check: SYSTEM_ADMIN, scope: SYSTEM},
  'placement:resource_providers:traits:delete': {check: SYSTEM_ADMIN, scope: SYSTEM},
  'placement:resource_providers:usages': {check: SYSTEM_READER, scope: SYSTEM},
  'placement:resource_providers:allocations:list': {check: SYSTEM_READER, scope: SYSTEM},
  'placement:usages': {check: 'rule:system_or_project_reader', scope: ['system', 'project']},
  'placement:traits:list': {check: SYSTEM_READER, scope: SYSTEM},
  'placement:traits:show': {check: SYSTEM_READER, scope: SYSTEM},
  'placement:traits:update': {check: SYSTEM_ADMIN, scope: SYSTEM},
  'placement:traits:delete': {check: SYSTEM_ADMIN, scope: SYSTEM},
  'placement:resource_classes:list': {check: SYSTEM_READER, scope: SYSTEM},
  'placement:resource_classes:create': {check: SYSTEM_ADMIN, scope: SYSTEM},
  'placement:resource_classes:show': {check: SYSTEM_READER, scope: SYSTEM},
  'placement:resource_classes:update': {check: SYSTEM_ADMIN, scope: SYSTEM},
  'placement:resource_classes:delete': {check: SYSTEM_ADMIN, scope: SYSTEM},
  'placement:allocations:list': {check: SYSTEM_READER, scope: SYSTEM},
  'placement:allocations:manage': {check: SYSTEM_ADMIN, scope: SYSTEM},
  'placement:allocations:update': {check: SYSTEM_ADMIN, scope: SYSTEM},
  'placement:allocations:delete': {check: SYSTEM_ADMIN, scope: SYSTEM},
  'placement:allocation_candidates:list': {check: SYSTEM_READER, scope: SYSTEM},
  'placement:reshaper:reshape': {check: SYSTEM_ADMIN, scope: SYSTEM},

  // placemat's own API: reading it is a reader's, changing it an admin's, as for Placement's.
  'placemat:read': {check: SYSTEM_READER, scope: SYSTEM},
  'placemat:write': {check: SYSTEM_ADMIN, scope: SYSTEM},
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
