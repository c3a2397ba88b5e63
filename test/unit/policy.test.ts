/**
 * Placement's policy as oslo.policy enforces it: check strings parsed and evaluated, the 15.0.0
 * and 8.0.0 defaults with and without the deprecated fallback, scope enforcement, an operator's file
 * over the defaults, and noauth2's headers read into credentials.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {CheckStringError, evaluate, parseCheck, type Credentials} from '../../src/http/policy/check-string.js'
import {noauthCredentials} from '../../src/http/policy/credentials.js'
import {ROUTE_RULES, ruleOfRoute} from '../../src/http/policy/defaults.js'
import {Policy} from '../../src/http/policy/policy.js'

const creds = (c: Partial<Credentials>): Credentials => ({roles: [], project_id: null, user_id: 'u', system_scope: null, ...c})
const systemAdmin = creds({roles: ['admin', 'member', 'reader'], system_scope: 'all'})
const systemReader = creds({roles: ['reader'], system_scope: 'all'})
const projectAdmin = creds({roles: ['admin', 'member', 'reader'], project_id: 'p1'})
const projectReader = creds({roles: ['reader'], project_id: 'p1'})
const nobody = creds({project_id: 'p1'})
const service = creds({roles: ['service'], project_id: 'services'})
const projectMember = creds({roles: ['member', 'reader'], project_id: 'p1'})

describe('check strings', () => {
  const ok = (text: string, c: Credentials, target: Record<string, unknown> = {}, rules: Record<string, string> = {}) =>
    evaluate(parseCheck(text), target, c, (n) => (n in rules ? parseCheck(rules[n]) : undefined))

  it('read as oslo.policy reads them: not, then and, then or; parentheses; @ and !', () => {
    expect(ok('@', nobody)).toBe(true)
    expect(ok('!', systemAdmin)).toBe(false)
    expect(ok('', nobody)).toBe(true)
    expect(ok('role:ADMIN', systemAdmin)).toBe(true)
    expect(ok('role:admin or role:reader and system_scope:all', projectReader)).toBe(false)
    expect(ok('(role:admin or role:reader) and not system_scope:all', projectReader)).toBe(true)
    expect(ok('not role:admin and not role:reader', nobody)).toBe(true)
    expect(ok('project_id:%(project_id)s', projectReader, {project_id: 'p1'})).toBe(true)
    expect(ok('project_id:%(project_id)s', projectReader, {project_id: 'p2'})).toBe(false)
    expect(ok('project_id:%(project_id)s', projectReader, {})).toBe(false)
    // Python's str(None) on both sides, as oslo.policy compares them.
    expect(ok('project_id:%(project_id)s', systemReader, {project_id: null})).toBe(true)
    expect(ok('domain_id:d1', systemAdmin)).toBe(false)
    expect(ok("'p1':%(project_id)s", nobody, {project_id: 'p1'})).toBe(true)
    expect(ok('rule:a', projectReader, {}, {a: 'role:reader'})).toBe(true)
    expect(ok('rule:missing', systemAdmin)).toBe(false)
    expect(ok('rule:loop', systemAdmin, {}, {loop: 'rule:loop'})).toBe(false)
  })

  it('refuse what they cannot read', () => {
    for (const bad of ['role:admin and', '(role:admin', 'role:admin)', 'admin', 'and role:x', 'role:a or or role:b']) {
      expect(() => parseCheck(bad), bad).toThrow(CheckStringError)
    }
  })
})

describe("Placement's policy", () => {
  const every = [...new Set(Object.values(ROUTE_RULES))]

  it("15.0.0's defaults without new defaults or scope enforced (--no-enforce-new-defaults --no-enforce-scope): admins of any scope and services may do everything, project readers their own usages", () => {
    const p = Policy.load({enforceNewDefaults: false, enforceScope: false})
    for (const rule of every.filter((r) => r !== 'placement:reshaper:reshape')) {
      expect(p.authorize(rule, systemAdmin), rule).toBe(true)
      expect(p.authorize(rule, projectAdmin), rule).toBe(true)
      expect(p.authorize(rule, service), rule).toBe(true)
      expect(p.authorize(rule, nobody), rule).toBe(false)
      expect(p.authorize(rule, projectMember), rule).toBe(rule === 'placement:usages')
    }
    // Reshaping is the service's (an admin still may, by the deprecated default).
    expect(p.authorize('placement:reshaper:reshape', service)).toBe(true)
    expect(p.authorize('placement:reshaper:reshape', projectAdmin)).toBe(true)
    expect(Policy.load({enforceNewDefaults: true, enforceScope: false}).authorize('placement:reshaper:reshape', projectAdmin)).toBe(false)
    // System readers no longer read.
    expect(p.authorize('placement:resource_providers:list', systemReader)).toBe(false)
    expect(p.authorize('placement:usages', projectReader, {project_id: 'p1'})).toBe(true)
    expect(p.authorize('placement:usages', projectReader, {project_id: 'p2'})).toBe(false)
    // placemat's own API: read by admins and services, changed by admins.
    expect(p.authorize('placemat:read', service)).toBe(true)
    expect(p.authorize('placemat:write', service)).toBe(false)
    expect(p.authorize('placemat:write', projectAdmin)).toBe(true)
  })

  it("enforces new defaults and scope unless told otherwise with 15.0.0's defaults (as Placement 2026.1 on oslo.policy 4.4.0), neither with 8.0.0's (as a Zed-era cloud)", () => {
    expect(Policy.load().enforces).toEqual({enforceNewDefaults: true, enforceScope: true})
    expect(Policy.load({defaults: '15.0.0', enforceScope: false}).enforces).toEqual({enforceNewDefaults: true, enforceScope: false})
    expect(Policy.load({defaults: '8.0.0'}).enforces).toEqual({enforceNewDefaults: false, enforceScope: false})
    expect(Policy.load({defaults: '8.0.0', enforceScope: true}).enforces).toEqual({enforceNewDefaults: false, enforceScope: true})
    const p = Policy.load()
    // A Zed-era admin's system-scoped token is refused; a project admin's or a service's is not.
    expect(p.authorize('placement:resource_providers:list', systemAdmin)).toBe(false)
    expect(p.authorize('placement:resource_providers:list', projectAdmin)).toBe(true)
    expect(p.authorize('placement:resource_providers:list', service)).toBe(true)
    // Reshaping is the service role's alone: role admin no longer reshapes.
    expect(p.authorize('placement:reshaper:reshape', projectAdmin)).toBe(false)
    expect(p.authorize('placement:reshaper:reshape', service)).toBe(true)
    // The daemon's own admin token (--auth token) still may do everything, reshaping included.
    for (const rule of [...every, 'placemat:read', 'placemat:write']) expect(p.authorize(rule, p.localAdmin), rule).toBe(true)
  })

  it("15.0.0's new defaults and scope: project-scoped admins and services; system tokens refused", () => {
    const p = Policy.load({enforceNewDefaults: true, enforceScope: true})
    expect(p.authorize('placement:resource_providers:create', projectAdmin)).toBe(true)
    expect(p.authorize('placement:resource_providers:create', service)).toBe(true)
    expect(p.authorize('placement:allocations:update', service)).toBe(true)
    expect(p.authorize('placement:resource_providers:list', systemAdmin)).toBe(false)
    expect(p.authorize('placement:resource_providers:list', systemReader)).toBe(false)
    expect(p.authorize('placement:resource_providers:list', projectMember)).toBe(false)
    expect(p.authorize('placement:usages', projectReader, {project_id: 'p1'})).toBe(true)
    // The daemon's own admin token (--auth token) is an admin of the defaults' scope.
    expect(p.authorize('placement:resource_providers:create', p.localAdmin)).toBe(true)
    expect(p.authorize('placement:reshaper:reshape', p.localAdmin)).toBe(true)
    expect(p.authorize('placemat:write', p.localAdmin)).toBe(true)
  })

  it('8.0.0 defaults: an admin of any scope may do everything, nobody else anything but their own usages', () => {
    const p = Policy.load({defaults: '8.0.0'})
    for (const rule of every) {
      expect(p.authorize(rule, systemAdmin), rule).toBe(true)
      expect(p.authorize(rule, projectAdmin), rule).toBe(true)
      expect(p.authorize(rule, nobody), rule).toBe(false)
    }
    expect(p.authorize('placement:resource_providers:list', systemReader)).toBe(true)
    expect(p.authorize('placement:resource_providers:create', systemReader)).toBe(false)
    expect(p.authorize('placement:usages', projectReader, {project_id: 'p1'})).toBe(true)
    expect(p.authorize('placement:usages', projectReader, {project_id: 'p2'})).toBe(false)
  })

  it('8.0.0 new defaults and scope: system readers read, system admins write, project tokens only their usages', () => {
    const p = Policy.load({defaults: '8.0.0', enforceNewDefaults: true, enforceScope: true})
    expect(p.authorize('placement:resource_providers:list', systemReader)).toBe(true)
    expect(p.authorize('placement:resource_providers:create', systemReader)).toBe(false)
    expect(p.authorize('placement:resource_providers:create', systemAdmin)).toBe(true)
    expect(p.authorize('placement:resource_providers:list', projectAdmin)).toBe(false)
    expect(p.authorize('placement:usages', projectReader, {project_id: 'p1'})).toBe(true)
    expect(p.authorize('placement:usages', projectReader, {project_id: 'p2'})).toBe(false)
    // New defaults without scope enforcement: a project admin is not a system admin either.
    expect(Policy.load({defaults: '8.0.0', enforceNewDefaults: true}).authorize('placement:resource_providers:list', projectAdmin)).toBe(
      false,
    )
    // Scope alone keeps the deprecated fallback, but a project token is out of scope.
    expect(Policy.load({defaults: '8.0.0', enforceScope: true}).authorize('placement:resource_providers:list', projectAdmin)).toBe(false)
    expect(Policy.load({defaults: '8.0.0', enforceScope: true}).authorize('placement:resource_providers:list', systemAdmin)).toBe(true)
    expect(p.authorize('placement:reshaper:reshape', p.localAdmin)).toBe(true)
  })

  it("an operator's file overrides rules (YAML or JSON), keeps the rest, and its errors name the rule", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-policy-'))
    try {
      const yaml = path.join(dir, 'policy.yaml')
      fs.writeFileSync(yaml, "placement:resource_providers:list: '@'\nplacemat:read: 'rule:ops'\nops: 'role:ops'\n")
      const p = Policy.load({file: yaml})
      expect(p.authorize('placement:resource_providers:list', nobody)).toBe(true)
      expect(p.authorize('placement:resource_providers:show', nobody)).toBe(false)
      expect(p.authorize('placemat:read', creds({roles: ['ops'], project_id: 'x'}))).toBe(true)
      expect(Policy.unknownRules(yaml)).toEqual(['ops'])
      const json = path.join(dir, 'policy.json')
      fs.writeFileSync(json, JSON.stringify({'placement:traits:list': 'role:reader'}))
      expect(Policy.load({file: json}).authorize('placement:traits:list', projectReader)).toBe(true)
      fs.writeFileSync(yaml, "placement:traits:list: 'role:reader and'\n")
      expect(() => Policy.load({file: yaml})).toThrow(/policy rule placement:traits:list: 'role:reader and' ends too soon/)
      fs.writeFileSync(yaml, '- a list\n')
      expect(() => Policy.load({file: yaml})).toThrow(/expected a mapping/)
    } finally {
      fs.rmSync(dir, {recursive: true, force: true})
    }
  })

  it("every Placement route has Placement's rule; placemat's own have a reader's and an admin's", () => {
    expect(ruleOfRoute('GET', '/resource_providers/:uuid/inventories/:resource_class')).toBe(
      'placement:resource_providers:inventories:show',
    )
    expect(ruleOfRoute('POST', '/allocations')).toBe('placement:allocations:manage')
    expect(ruleOfRoute('GET', '/placemat/v1/groups')).toBe('placemat:read')
    expect(ruleOfRoute('PUT', '/placemat/v1/topology/layout')).toBe('placemat:write')
  })
})

describe("noauth2's credentials", () => {
  it('come from the token and keystonemiddleware headers, as Placement reads them', () => {
    expect(noauthCredentials('admin', {})).toEqual({roles: ['admin'], project_id: 'admin', user_id: 'admin', system_scope: null})
    expect(noauthCredentials('user:proj', {})).toEqual({roles: [], project_id: 'proj', user_id: 'user', system_scope: null})
    expect(noauthCredentials('user', {'x-roles': 'admin, member,reader', 'x-project-id': 'p9'})).toEqual({
      roles: ['admin', 'member', 'reader'],
      project_id: 'p9',
      user_id: 'user',
      system_scope: null,
    })
    expect(noauthCredentials('user', {'x-roles': 'reader', 'openstack-system-scope': 'all'})).toEqual({
      roles: ['reader'],
      project_id: null,
      user_id: 'user',
      system_scope: 'all',
    })
  })
})
