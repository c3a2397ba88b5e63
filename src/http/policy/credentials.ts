/**
 * Who a request is, for the policy: what keystonemiddleware would put in its headers, read as
 * Placement's noauth2 reads them (the local admin of `--auth token` is the policy's localAdmin).
 */
import type {IncomingHttpHeaders} from 'node:http'
import type {FastifyRequest} from 'fastify'
import type {RouteDef} from '../context.js'
import type {Credentials} from './check-string.js'

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const v = headers[name]
  return Array.isArray(v) ? v.at(-1) : v
}

/**
 * Placement's noauth2: the token is USER[:PROJECT]; `x-roles` lists the roles (without it,
 * user `admin` has role admin and others none); `x-project-id` names the project, else the
 * token's (not for a system-scoped request, `openstack-system-scope: all`).
 */
export function noauthCredentials(token: string, headers: IncomingHttpHeaders): Credentials {
  const [user, ...rest] = token.split(':')
  const tokenProject = rest.join(':') || user
  const rolesHeader = header(headers, 'x-roles')
  const roles =
    rolesHeader !== undefined
      ? rolesHeader
          .split(',')
          .map((r) => r.trim())
          .filter(Boolean)
      : user === 'admin'
        ? ['admin']
        : []
  const systemScope = header(headers, 'openstack-system-scope') || null
  const project = header(headers, 'x-project-id') || (systemScope ? null : tokenProject)
  return {roles, project_id: project, user_id: user, system_scope: systemScope}
}

/** What a route's rule is checked against: GET /usages asks about the project it is asked for; the rest, the caller's own. */
export function policyTarget(def: RouteDef, req: FastifyRequest): Record<string, unknown> | undefined {
  if (def.method === 'GET' && def.url === '/usages') {
    const q = (req.query ?? {}) as Record<string, string | string[] | undefined>
    const v = q.project_id
    return {project_id: (Array.isArray(v) ? v.at(-1) : v) ?? null}
  }
  return undefined
}
