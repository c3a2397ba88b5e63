/**
 * The daemon's token validation against a stand-in Keystone (the real one is in
 * e2e/keystone.test.ts): a service login reused until near its expiry and renewed on a 401,
 * validated tokens cached no longer than token_cache_time nor past their expiry, an expired
 * token refused, one question per token at a time, and an unreachable Keystone told apart
 * from a bad token.
 */
import http from 'node:http'
import type {AddressInfo} from 'node:net'
import {afterEach, describe, expect, it} from 'vitest'
import {KeystoneUnavailable, KeystoneValidator} from '../../src/http/auth/keystone.js'

interface FakeToken {
  expires: number
  project?: string
  system?: boolean
  roles: string[]
}

function fakeKeystone() {
  const tokens = new Map<string, FakeToken>()
  const calls = {logins: 0, validations: 0}
  let serviceTokens = 0
  let revokeService = false
  const server = http.createServer((req, res) => {
    const url = new URL(req.url!, 'http://x')
    if (req.method === 'POST' && url.pathname === '/v3/auth/tokens') {
      calls.logins++
      const id = `service-${++serviceTokens}`
      tokens.set(id, {expires: Date.now() + 3600_000, roles: ['admin'], project: 'service'})
      res.writeHead(201, {'content-type': 'application/json', 'x-subject-token': id})
      res.end(JSON.stringify({token: {expires_at: new Date(Date.now() + 3600_000).toISOString()}}))
      return
    }
    if (req.method === 'GET' && url.pathname === '/v3/auth/tokens') {
      calls.validations++
      const service = String(req.headers['x-auth-token'])
      if (!tokens.has(service) || revokeService) {
        revokeService = false
        tokens.delete(service)
        res.writeHead(401).end()
        return
      }
      const t = tokens.get(String(req.headers['x-subject-token']))
      // Keystone: an expired token is not found, unless a service asks with allow_expired.
      if (!t || (t.expires < Date.now() && url.searchParams.get('allow_expired') !== '1')) {
        res.writeHead(404).end()
        return
      }
      res.writeHead(200, {'content-type': 'application/json'})
      res.end(
        JSON.stringify({
          token: {
            expires_at: new Date(t.expires).toISOString(),
            user: {id: 'u1'},
            ...(t.project ? {project: {id: t.project}} : {}),
            ...(t.system ? {system: {all: true}} : {}),
            roles: t.roles.map((name) => ({name})),
          },
        }),
      )
      return
    }
    res.writeHead(404).end()
  })
  return {
    tokens,
    calls,
    revokeServiceToken: () => (revokeService = true),
    start: () =>
      new Promise<string>((r) => server.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))),
    stop: () => new Promise((r) => server.close(r)),
  }
}

let stopFake: (() => Promise<unknown>) | undefined
afterEach(async () => stopFake?.())

const settings = (authUrl: string, tokenCacheSeconds = 300) => ({
  authUrl,
  username: 'placement',
  password: 'x',
  projectName: 'service',
  tokenCacheSeconds,
})

describe('Keystone token validation', () => {
  it("takes the token's user, project, roles and scope; refuses unknown and expired tokens; caches within bounds", async () => {
    const ks = fakeKeystone()
    const url = await ks.start()
    stopFake = ks.stop
    ks.tokens.set('member', {expires: Date.now() + 3600_000, project: 'p1', roles: ['member', 'reader']})
    ks.tokens.set('system-reader', {expires: Date.now() + 3600_000, system: true, roles: ['reader']})
    ks.tokens.set('expired', {expires: Date.now() - 1000, project: 'p1', roles: ['admin']})
    const v = new KeystoneValidator(settings(`${url}/v3`))
    expect(await v.validate('member')).toEqual({roles: ['member', 'reader'], project_id: 'p1', user_id: 'u1', system_scope: null})
    expect(await v.validate('system-reader')).toEqual({roles: ['reader'], project_id: null, user_id: 'u1', system_scope: 'all'})
    expect(await v.validate('nope')).toBeNull()
    expect(await v.validate('expired')).toBeNull()
    expect(ks.calls.logins).toBe(1)
    // Cached: no new question for a token seen before...
    const before = ks.calls.validations
    await Promise.all([v.validate('member'), v.validate('member')])
    expect(ks.calls.validations).toBe(before)
    // ...but never past the token's own expiry (made now, and long enough for a busy machine to
    // validate it once before it expires).
    const expires = Date.now() + 2000
    ks.tokens.set('short', {expires, project: 'p1', roles: ['admin']})
    expect(await v.validate('short')).not.toBeNull()
    await new Promise((r) => setTimeout(r, Math.max(0, expires - Date.now()) + 100))
    ks.tokens.delete('short')
    expect(await v.validate('short')).toBeNull()
    expect(v.wwwAuthenticate).toBe(`Keystone uri="${url}/v3"`)
  })

  it('asks again after token_cache_time, once per token at a time; logs in again when its own token is refused', async () => {
    const ks = fakeKeystone()
    const url = await ks.start()
    stopFake = ks.stop
    ks.tokens.set('t', {expires: Date.now() + 3600_000, project: 'p', roles: ['reader']})
    const v = new KeystoneValidator(settings(url, 0))
    const answers = await Promise.all(Array.from({length: 5}, () => v.validate('t')))
    expect(answers.every((a) => a?.project_id === 'p')).toBe(true)
    expect(ks.calls.validations).toBe(1)
    ks.tokens.delete('t') // revoked: with no cache time left, the next request sees it
    expect(await v.validate('t')).toBeNull()
    ks.tokens.set('t2', {expires: Date.now() + 3600_000, project: 'p', roles: ['reader']})
    ks.revokeServiceToken()
    expect(await v.validate('t2')).not.toBeNull()
    expect(ks.calls.logins).toBe(2)
  })

  it('an unreachable Keystone is not a bad token', async () => {
    const v = new KeystoneValidator(settings('http://127.0.0.1:9'))
    await expect(v.validate('any')).rejects.toThrow(KeystoneUnavailable)
  })

  it("with a service's token beside it, a user token that expired is taken (X-Service-Token, service_token_roles)", async () => {
    const ks = fakeKeystone()
    const url = await ks.start()
    stopFake = ks.stop
    ks.tokens.set('nova', {expires: Date.now() + 3600_000, project: 'service', roles: ['service']})
    ks.tokens.set('someone', {expires: Date.now() + 3600_000, project: 'p', roles: ['member']})
    ks.tokens.set('user', {expires: Date.now() + 3600_000, project: 'p', roles: ['member']})
    ks.tokens.set('expired', {expires: Date.now() - 60_000, project: 'p', roles: ['admin']})
    const v = new KeystoneValidator(settings(url))
    expect(await v.validate('expired')).toBeNull()
    expect(await v.validate('expired', 'nova')).toMatchObject({project_id: 'p', roles: ['admin']})
    expect(await v.validate('expired', 'someone')).toBeNull()
    expect(await v.validate('user', 'someone')).toMatchObject({project_id: 'p'})
    expect(await v.validate('user', 'not-a-token')).toBeNull()
    const strict = new KeystoneValidator({...settings(url), serviceTokenRolesRequired: true})
    expect(await strict.validate('user', 'someone')).toBeNull()
    expect(await strict.validate('user', 'nova')).toMatchObject({project_id: 'p'})
  })
})
