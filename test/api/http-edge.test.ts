/**
 * The daemon's edge under hostile input: every reproduction here once got a 500, a hang, an
 * answer outside Placement's error format, or a write it should not have made.
 */
import {depth} from '../helpers/depth.js'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import {randomUUID} from 'node:crypto'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {buildApp} from '../../src/http/app.js'
import {Store} from '../../src/store/store.js'
import {AdminTokenError, ensureAdminToken} from '../../src/daemon/paths.js'
import {testApi, type TestApi} from '../helpers/http-helpers.js'

let api: TestApi
beforeEach(async () => {
  api = await testApi()
})
afterEach(() => api.close())

/** Placement's error body: one error with status, title, detail and request id. */
function expectPlacementError(r: {status: number; body: any; headers: Record<string, any>}, status: number) {
  expect(r.status, JSON.stringify(r.body)?.slice(0, 300)).toBe(status)
  expect(r.headers['content-type']).toBe('application/json')
  expect(r.body.errors).toHaveLength(1)
  expect(r.body.errors[0]).toMatchObject({
    status,
    title: expect.any(String),
    detail: expect.any(String),
    request_id: expect.stringMatching(/^req-/),
  })
}

const version = () => api.store.state.version

describe('admin token', () => {
  let dir: string
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-token-'))
  })
  afterEach(() => fs.rmSync(dir, {recursive: true, force: true}))

  it('is created owner-only with a random value, and read back the same', () => {
    const db = path.join(dir, 'p.db')
    const token = ensureAdminToken(db)
    expect(token).toMatch(/^[0-9a-f]{48}$/)
    expect(fs.statSync(path.join(dir, 'admin-token')).mode & 0o777).toBe(0o600)
    expect(ensureAdminToken(db)).toBe(token)
    expect(fs.readdirSync(dir)).toEqual(['admin-token'])
  })

  it('refuses an empty or blank token file, and one others can read', () => {
    const db = path.join(dir, 'p.db')
    const file = path.join(dir, 'admin-token')
    fs.writeFileSync(file, '', {mode: 0o600})
    expect(() => ensureAdminToken(db)).toThrow(AdminTokenError)
    expect(() => ensureAdminToken(db)).toThrow(/empty/)
    fs.writeFileSync(file, '  \n')
    expect(() => ensureAdminToken(db)).toThrow(/empty/)
    fs.writeFileSync(file, 'x'.repeat(40) + '\n')
    fs.chmodSync(file, 0o644)
    expect(() => ensureAdminToken(db)).toThrow(/chmod 600/)
  })

  it('an app with token auth refuses to start without a token, and an empty header is never admin', async () => {
    const store = await Store.open(':memory:')
    try {
      await expect(buildApp({store, auth: 'token', adminToken: ''})).rejects.toThrow(/admin token/)
      const app = await buildApp({store, auth: 'token', adminToken: 'a'.repeat(48)})
      const ask = (token: string) => app.inject({method: 'GET', url: '/resource_providers', headers: {'x-auth-token': token}})
      expect((await ask('')).statusCode).toBe(401)
      expect((await ask('a'.repeat(47))).statusCode).toBe(401)
      expect((await ask('a'.repeat(48))).statusCode).toBe(200)
      await app.close()
    } finally {
      await store.close()
    }
  })
})

describe('bounded work and bounded error texts', () => {
  it('an 8 MiB body that fails validation gets a short error', async () => {
    const body = JSON.stringify({name: 'x'.repeat(8 * 1024 * 1024), uuid: randomUUID()})
    const r = await api.call('POST', '/resource_providers', body)
    expectPlacementError(r, 400)
    expect(JSON.stringify(r.body).length).toBeLessThan(64 * 1024)
    expect(r.body.errors[0].detail).toContain('is too long')
  })

  it('a huge array of wrong items, and a huge object of unexpected keys, get short errors', async () => {
    const items = Array.from({length: depth(400_000, 100_000)}, (_, i) => ({i}))
    // The body is checked before the provider is looked up, as in Placement.
    expectPlacementError(
      await api.call('PUT', `/resource_providers/${randomUUID()}/traits`, {resource_provider_generation: 0, traits: items}),
      400,
    )
    const cn = randomUUID()
    await api.call('POST', '/resource_providers', {name: 'cn', uuid: cn})
    const r2 = await api.call('PUT', `/resource_providers/${cn}/traits`, {resource_provider_generation: 0, traits: items})
    expectPlacementError(r2, 400)
    expect(JSON.stringify(r2.body).length).toBeLessThan(64 * 1024)
    const keys = Object.fromEntries(Array.from({length: depth(300_000, 75_000)}, (_, i) => [`k${i}`, i]))
    const r3 = await api.call('POST', '/resource_providers', {name: 'y', ...keys})
    expectPlacementError(r3, 400)
    expect(JSON.stringify(r3.body).length).toBeLessThan(64 * 1024)
  })

  it('uniqueItems is linear: 100,000 aggregates in one PUT (25,000 by default)', async () => {
    const cn = randomUUID()
    await api.call('POST', '/resource_providers', {name: 'cn', uuid: cn})
    const aggregates = Array.from({length: depth(100_000, 25_000)}, () => randomUUID())
    const ok = await api.call('PUT', `/resource_providers/${cn}/aggregates`, {resource_provider_generation: 0, aggregates})
    expect(ok.status).toBe(200)
    const dup = await api.call('PUT', `/resource_providers/${cn}/aggregates`, {
      resource_provider_generation: 1,
      aggregates: [...aggregates, aggregates[0]],
    })
    expectPlacementError(dup, 400)
    expect(dup.body.errors[0].detail).toContain('has non-unique elements')
  })

  it('absurdly deep JSON is refused early with a 400', async () => {
    for (const depth of [65, 2_000, 100_000]) {
      const body = '{"name": ' + '['.repeat(depth) + ']'.repeat(depth) + '}'
      const r = await api.call('POST', '/resource_providers', body)
      expectPlacementError(r, 400)
      expect(r.body.errors[0].detail).toContain('nested deeper than 64 levels')
    }
    // Placement's own bodies stay well within it.
    expect((await api.call('POST', '/resource_providers', {name: 'ok', uuid: randomUUID()})).status).toBe(200)
  })
})

describe('names that could not be answered or stored are refused before anything is written', () => {
  it('a trait or resource class name with a final newline', async () => {
    const before = version()
    expectPlacementError(await api.call('PUT', '/traits/CUSTOM_A%0A'), 400)
    expectPlacementError(await api.call('PUT', '/resource_classes/CUSTOM_A%0A'), 400)
    const r = await api.call('POST', '/resource_classes', {name: 'CUSTOM_A\n'})
    expectPlacementError(r, 400)
    expect(r.body.errors[0].detail).toContain("'CUSTOM_A\\n' does not match")
    expect(version()).toBe(before)
    expect((await api.call('GET', '/traits?name=startswith:CUSTOM')).body.traits).toEqual([])
  })

  it('lone UTF-16 surrogates and NUL characters in any JSON string', async () => {
    const before = version()
    const uuid = randomUUID()
    for (const name of ['\\ud800', 'a\\udfffb', 'x\\u0000y']) {
      const r = await api.call('POST', '/resource_providers', `{"name": "${name}", "uuid": "${uuid}"}`)
      expectPlacementError(r, 400)
    }
    const consumer = randomUUID()
    const r = await api.call(
      'PUT',
      `/allocations/${consumer}`,
      `{"allocations": {}, "project_id": "p\\u0000", "user_id": "u", "consumer_generation": null}`,
    )
    expectPlacementError(r, 400)
    expect(version()).toBe(before)
    // A surrogate pair is a character like any other.
    expect((await api.call('POST', '/resource_providers', `{"name": "\\ud83d\\ude00", "uuid": "${uuid}"}`)).status).toBe(200)
    expect((await api.call('GET', `/resource_providers/${uuid}`)).body.name).toBe('😀')
  })

  it('NUL in a query string or path is a 400', async () => {
    expectPlacementError(await api.call('GET', '/usages?project_id=%00'), 400)
    expectPlacementError(await api.call('GET', '/traits/CUSTOM_%00'), 400)
  })

  it('aggregate ids in urn:uuid: or {braced} form are stored canonical', async () => {
    const cn = randomUUID()
    await api.call('POST', '/resource_providers', {name: 'cn', uuid: cn})
    const agg = randomUUID()
    const r = await api.call('PUT', `/resource_providers/${cn}/aggregates`, {
      resource_provider_generation: 0,
      aggregates: [`urn:uuid:${agg}`, `{${randomUUID().toUpperCase()}}`],
    })
    expect(r.status).toBe(200)
    expect(r.body.aggregates[0]).toBe(agg)
    for (const a of r.body.aggregates) expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    const found = await api.call('GET', `/resource_providers?member_of=${encodeURIComponent(`{${agg}}`)}`)
    expect(found.body.resource_providers.map((p: any) => p.uuid)).toEqual([cn])
  })
})

describe('no lookups through prototype keys', () => {
  it('batch ops named after Object.prototype members are unknown ops', async () => {
    for (const op of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      const r = await api.call('POST', '/placemat/v1/batch', `{"operations": [{"op": "${op}"}]}`)
      expectPlacementError(r, 400)
      expect(r.body.errors[0].detail).toContain('unknown op')
    }
  })

  it('a query key named __proto__ or constructor is unexpected', async () => {
    for (const key of ['__proto__', 'constructor', 'toString']) {
      expectPlacementError(await api.call('GET', `/resource_providers?${key}=x`), 400)
    }
  })
})

describe("every answer is in Placement's format", () => {
  it('an undecodable path is a 404, a very long parameter reaches its handler', async () => {
    expectPlacementError(await api.call('GET', '/resource_providers/%ff'), 404)
    expectPlacementError(await api.call('GET', `/resource_providers/${'a'.repeat(2000)}`), 404)
    const long = await api.call('PUT', `/traits/CUSTOM_${'A'.repeat(2000)}`)
    expectPlacementError(long, 400)
  })

  it('unknown methods get 405 with Allow', async () => {
    for (const method of ['TRACE', 'PURGE', 'PROPFIND', 'PATCH']) {
      const r = await api.call(method, '/resource_providers')
      expectPlacementError(r, 405)
      expect(r.headers.allow).toBe('GET, POST')
    }
  })
})

describe('authorization before the body', () => {
  it('a non-admin gets 403 whatever the content type', async () => {
    const r = await api.call('POST', '/placemat/v1/batch', 'not json', {'x-auth-token': 'user', 'content-type': 'text/plain'})
    expectPlacementError(r, 403)
  })

  it("a non-admin's huge body is never read: the 403 comes before it is sent", async () => {
    await api.app.listen({host: '127.0.0.1', port: 0})
    const port = (api.app.server.address() as net.AddressInfo).port
    const answer = await rawExchange(
      port,
      `POST /placemat/v1/batch HTTP/1.1\r\nHost: x\r\nX-Auth-Token: user\r\nContent-Type: application/json\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n{"opera`,
    )
    expect(answer).toMatch(/^HTTP\/1\.1 403/)
    expect(answer).toContain('"title":"Forbidden"')
  })
})

describe('stalled clients are disconnected', () => {
  it('a body that never comes gets a 408 and the connection closed', async () => {
    const t = await testApi({timeouts: {headersMs: 300, requestMs: 300}})
    try {
      await t.app.listen({host: '127.0.0.1', port: 0})
      const port = (t.app.server.address() as net.AddressInfo).port
      const answer = await rawExchange(
        port,
        'POST /resource_providers HTTP/1.1\r\nHost: x\r\nX-Auth-Token: admin\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{',
      )
      expect(answer).toMatch(/^HTTP\/1\.1 408/)
      const headersOnly = await rawExchange(port, 'GET / HTTP/1.1\r\nHost: x\r\n')
      expect(headersOnly).toMatch(/^HTTP\/1\.1 408/)
    } finally {
      await t.close()
    }
  })
})

/** Writes raw bytes and collects what comes back until the server closes the connection. */
function rawExchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text))
    let out = ''
    socket.on('data', (d) => {
      out += d.toString()
      // An answer to a refused request is complete once its body has arrived.
      const m = /content-length: (\d+)\r\n[\s\S]*?\r\n\r\n([\s\S]*)$/i.exec(out)
      if (m && Buffer.byteLength(m[2]) >= Number(m[1])) socket.destroy()
    })
    socket.on('close', () => resolve(out))
    socket.on('error', (err) => ((err as NodeJS.ErrnoException).code === 'ECONNRESET' ? resolve(out) : reject(err)))
  })
}
