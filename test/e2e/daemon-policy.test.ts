/**
 * The daemon's policy as Placement 2026.1 runs it: with 15.0.0's defaults, new defaults and scope
 * are enforced unless `--no-enforce-new-defaults`, `--no-enforce-scope` or placement.conf's
 * [oslo_policy] say otherwise (the flags over the file); with `--policy-defaults 8.0.0` neither
 * is, unless told. The daemon's own admin token may still do everything, reshaping included.
 */
import fs from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {readAdminToken} from '../../src/daemon/paths.js'
import {startForeground, type ForegroundDaemon} from '../helpers/foreground-daemon.js'
import {tempFiles} from '../helpers/temp-files.js'

const newDb = tempFiles('placemat-daemon-policy-')
const H = {'openstack-api-version': 'placement latest', 'content-type': 'application/json'}
/** A Zed-era admin: role admin, system-scoped. */
const systemAdmin = {'x-auth-token': 'ops', 'x-roles': 'admin,member,reader', 'openstack-system-scope': 'all'}
/** noauth2's admin: role admin alone, project-scoped (project "admin"). */
const projectAdmin = {'x-auth-token': 'admin'}
const EMPTY_RESHAPE = JSON.stringify({inventories: {}, allocations: {}})

const status = async (d: ForegroundDaemon, headers: Record<string, string>, method = 'GET', p = '/resource_providers', body?: string) =>
  (await fetch(d.url + p, {method, headers: {...H, ...headers}, body})).status

/** The policy line of the daemon's log (written asynchronously: waited for). */
async function policyLine(d: ForegroundDaemon): Promise<Record<string, unknown>> {
  for (let i = 0; i < 200; i++) {
    const line = d
      .output()
      .split('\n')
      .find((l) => l.includes('"event":"policy"'))
    if (line) return JSON.parse(line)
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`no policy line in the log: ${d.output()}`)
}

const daemon = (args: string[]) => startForeground(['--db', newDb(), '--auth', 'noauth2', ...args])

describe('the daemon enforces new defaults and scope unless told', () => {
  it("by default (15.0.0's rules): a system-scoped admin is refused, a project admin is not, and only a service reshapes", async () => {
    const d = await daemon([])
    try {
      expect(await policyLine(d)).toMatchObject({defaults: '15.0.0', enforce_new_defaults: true, enforce_scope: true})
      expect(await status(d, systemAdmin)).toBe(403)
      expect(await status(d, projectAdmin)).toBe(200)
      expect(await status(d, projectAdmin, 'POST', '/reshaper', EMPTY_RESHAPE)).toBe(403)
      expect(await status(d, {...projectAdmin, 'x-roles': 'admin,service'}, 'POST', '/reshaper', EMPTY_RESHAPE)).not.toBe(403)
    } finally {
      await d.stop()
    }
  })

  it('--no-enforce-new-defaults --no-enforce-scope: role admin in any scope, as before', async () => {
    const d = await daemon(['--no-enforce-new-defaults', '--no-enforce-scope'])
    try {
      expect(await policyLine(d)).toMatchObject({enforce_new_defaults: false, enforce_scope: false})
      expect(await status(d, systemAdmin)).toBe(200)
      expect(await status(d, projectAdmin, 'POST', '/reshaper', EMPTY_RESHAPE)).not.toBe(403)
    } finally {
      await d.stop()
    }
  })

  it("placement.conf's [oslo_policy] turns them off, and a flag wins over the file", async () => {
    const conf = path.join(path.dirname(newDb()), 'placement.conf')
    fs.writeFileSync(conf, '[oslo_policy]\nenforce_scope = false\nenforce_new_defaults = False\n')
    const off = await daemon(['--config-file', conf])
    try {
      expect(await policyLine(off)).toMatchObject({enforce_new_defaults: false, enforce_scope: false})
      expect(await status(off, systemAdmin)).toBe(200)
    } finally {
      await off.stop()
    }
    const scoped = await daemon(['--config-file', conf, '--enforce-scope'])
    try {
      expect(await policyLine(scoped)).toMatchObject({enforce_new_defaults: false, enforce_scope: true})
      expect(await status(scoped, systemAdmin)).toBe(403)
      // New defaults stay off (the file's): noauth2's admin still reshapes by the deprecated default.
      expect(await status(scoped, projectAdmin, 'POST', '/reshaper', EMPTY_RESHAPE)).not.toBe(403)
    } finally {
      await scoped.stop()
    }
  })

  it("--policy-defaults 8.0.0 runs as a Zed-era cloud: nothing enforced unless told, so a project admin's token still works", async () => {
    const d = await daemon(['--policy-defaults', '8.0.0'])
    try {
      expect(await policyLine(d)).toMatchObject({defaults: '8.0.0', enforce_new_defaults: false, enforce_scope: false})
      expect(await status(d, projectAdmin)).toBe(200)
      expect(await status(d, systemAdmin)).toBe(200)
    } finally {
      await d.stop()
    }
    const secure = await daemon(['--policy-defaults', '8.0.0', '--enforce-new-defaults', '--enforce-scope'])
    try {
      expect(await status(secure, projectAdmin)).toBe(403)
      expect(await status(secure, systemAdmin)).toBe(200)
    } finally {
      await secure.stop()
    }
  })

  it("the daemon's admin token (--auth token) may do everything under the enforced defaults, reshaping included", async () => {
    const db = newDb()
    const d = await startForeground(['--db', db], {PLACEMAT_HOME: path.dirname(db)})
    try {
      const token = {'x-auth-token': readAdminToken(db)!}
      expect(await status(d, token)).toBe(200)
      expect(await status(d, token, 'POST', '/resource_providers', JSON.stringify({name: 'cn1'}))).toBe(200)
      expect(await status(d, token, 'POST', '/reshaper', EMPTY_RESHAPE)).not.toBe(403)
      expect(await status(d, token, 'GET', '/placemat/v1/groups')).toBe(200)
    } finally {
      await d.stop()
    }
  })
})
