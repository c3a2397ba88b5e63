/**
 * A real Keystone for the tests (Debian's python3-keystone): db_sync, fernet_setup,
 * credential_setup and bootstrap on SQLite in a temporary folder, then uwsgi serving
 * keystone-wsgi-public on a free loopback port. `keystoneAvailable` is false (and the tests
 * that need it are skipped, saying so) where it is not installed.
 */
import {execFile, type ChildProcess} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {promisify} from 'node:util'
import SQLite from 'better-sqlite3'

import {freePort} from './ports.js'
import {fetchAgain as fetch, startUwsgi} from './uwsgi.js'

const run = promisify(execFile)

export const keystoneAvailable = ['/usr/bin/keystone-manage', '/usr/bin/keystone-wsgi-public', '/usr/bin/uwsgi'].every((f) =>
  fs.existsSync(f),
)

export const ADMIN_PASSWORD = 'keystone-admin-secret'

export interface Keystone {
  url: string
  dir: string
  /** A token of `user` (password), scoped to `project` or to the system. */
  token(user: string, password: string, scope: {project: string} | 'system'): Promise<string>
  /** Keystone's admin API with the bootstrap admin's token. */
  admin<T = any>(method: string, path: string, body?: unknown): Promise<T>
  /** A user with roles (admin, member, reader, service) on a project and/or on the system (created once). */
  user(name: string, password: string, roles: {project?: string; projectRoles?: string[]; systemRoles?: string[]}): Promise<string>
  project(name: string): Promise<string>
  revoke(token: string): Promise<void>
  stop(): Promise<void>
}

export async function startKeystone(): Promise<Keystone> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-keystone-'))
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const conf = path.join(dir, 'keystone.conf')
  fs.writeFileSync(
    conf,
    [
      '[DEFAULT]',
      'use_stderr = true',
      '[database]',
      `connection = sqlite:///${path.join(dir, 'keystone.db')}`,
      '[fernet_tokens]',
      `key_repository = ${path.join(dir, 'fernet-keys')}`,
      '[credential]',
      `key_repository = ${path.join(dir, 'credential-keys')}`,
      '[token]',
      'provider = fernet',
      '',
    ].join('\n'),
  )
  const manage = (...args: string[]) => run('/usr/bin/keystone-manage', ['--config-file', conf, ...args], {cwd: dir})
  const owner = ['--keystone-user', String(os.userInfo().username), '--keystone-group', String(os.userInfo().username)]
  await manage('db_sync')
  await manage('fernet_setup', ...owner)
  await manage('credential_setup', ...owner)
  await manage(
    'bootstrap',
    '--bootstrap-password',
    ADMIN_PASSWORD,
    '--bootstrap-public-url',
    `${url}/v3`,
    '--bootstrap-region-id',
    'RegionOne',
  )
  // Write-ahead logging: Keystone can leave a read cursor open on a pooled connection, which in
  // SQLite's default journal mode keeps the next write from committing ("database is locked").
  const file = new SQLite(path.join(dir, 'keystone.db'))
  file.pragma('journal_mode = WAL')
  file.close()
  // One thread: Keystone on SQLite locks ("database is locked") when two of its threads write.
  const child: ChildProcess = await startUwsgi(
    '/usr/bin/keystone-wsgi-public',
    port,
    {OS_KEYSTONE_CONFIG_FILES: conf},
    path.join(dir, 'uwsgi.log'),
    `${url}/v3`,
  )

  const token = async (user: string, password: string, scope: {project: string} | 'system') => {
    const res = await fetch(`${url}/v3/auth/tokens?nocatalog`, {
      method: 'POST',
      headers: {'content-type': 'application/json'},
      body: JSON.stringify({
        auth: {
          identity: {methods: ['password'], password: {user: {name: user, password, domain: {id: 'default'}}}},
          scope: scope === 'system' ? {system: {all: true}} : {project: {name: scope.project, domain: {id: 'default'}}},
        },
      }),
    })
    if (res.status !== 201) throw new Error(`keystone token for ${user}: ${res.status} ${await res.text()}`)
    return res.headers.get('x-subject-token')!
  }
  let adminToken: string | undefined
  const admin = async (method: string, p: string, body?: unknown) => {
    adminToken ??= await token('admin', ADMIN_PASSWORD, {project: 'admin'})
    const res = await fetch(`${url}/v3${p}`, {
      method,
      headers: {'x-auth-token': adminToken, 'content-type': 'application/json'},
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    if (res.status >= 300) throw new Error(`keystone ${method} ${p}: ${res.status} ${await res.text()}`)
    return res.status === 204 ? undefined : res.json()
  }
  // Keystone's bootstrap makes admin, member and reader; `service` is the role a current nova's user has.
  await admin('POST', '/roles', {role: {name: 'service'}})
  const roleId = async (name: string) => (await admin('GET', `/roles?name=${name}`)).roles[0].id as string
  const projects = new Map<string, string>()
  const project = async (name: string) => {
    if (!projects.has(name)) projects.set(name, (await admin('POST', '/projects', {project: {name, domain_id: 'default'}})).project.id)
    return projects.get(name)!
  }
  return {
    url,
    dir,
    token,
    admin,
    project,
    async user(name, password, roles) {
      const id = (await admin('POST', '/users', {user: {name, password, domain_id: 'default'}})).user.id as string
      for (const r of roles.projectRoles ?? [])
        await admin('PUT', `/projects/${await project(roles.project!)}/users/${id}/roles/${await roleId(r)}`)
      for (const r of roles.systemRoles ?? []) await admin('PUT', `/system/users/${id}/roles/${await roleId(r)}`)
      return id
    },
    async revoke(t) {
      adminToken ??= await token('admin', ADMIN_PASSWORD, {project: 'admin'})
      const res = await fetch(`${url}/v3/auth/tokens`, {method: 'DELETE', headers: {'x-auth-token': adminToken, 'x-subject-token': t}})
      if (res.status !== 204) throw new Error(`keystone revoke: ${res.status}`)
    },
    async stop() {
      child.kill('SIGTERM')
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)))
      fs.rmSync(dir, {recursive: true, force: true})
    },
  }
}
