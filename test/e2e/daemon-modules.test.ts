import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {startForeground} from '../helpers/foreground-daemon.js'

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-modules-'))
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

// What a daemon loads shapes its start-up: on SQLite it never loads a server's driver, fastify's
// schema validator (ajv) or the YAML parser (nothing it serves there needs them).
describe('a daemon on SQLite', () => {
  it('serves without loading pg, mysql2, ajv or yaml', async () => {
    const listed = path.join(dir, 'modules.txt')
    // Preloaded into the daemon: at exit, the packages it loaded, as Node's module cache names them.
    const preload = path.join(dir, 'record-modules.cjs')
    fs.writeFileSync(
      preload,
      `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(listed)}, Object.keys(require.cache).join('\\n')))\n`,
    )
    const d = await startForeground(['--db', path.join(dir, 'p.db'), '--auth', 'noauth2', '--no-warm-up'], {
      NODE_OPTIONS: `--require ${preload}`,
    })
    const headers = {'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39', 'content-type': 'application/json'}
    const made = await fetch(`${d.url}/resource_providers`, {method: 'POST', headers, body: JSON.stringify({name: 'a'})})
    expect(made.status).toBe(200)
    const asked = await fetch(`${d.url}/allocation_candidates?resources=VCPU:1`, {headers})
    expect(asked.status).toBe(200)
    await d.stop()
    expect(await d.exited).toBe(0)
    const packages = new Set(
      fs
        .readFileSync(listed, 'utf8')
        .split('\n')
        .map((f) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(f)?.[1])
        .filter((p) => p !== undefined),
    )
    expect(packages.has('better-sqlite3')).toBe(true) // the record is of the daemon (fastify is in its bundle)
    for (const never of ['pg', 'mysql2', 'ajv', 'yaml']) expect(packages.has(never), never).toBe(false)
  })
})
