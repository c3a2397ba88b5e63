/**
 * The command line's Keystone session: a command that makes its calls in parallel (provider list
 * asks for the list and for the hosts out of service at once) logs in once, not once a call.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterEach, describe, expect, it, vi} from 'vitest'

const logIn = vi.fn()
vi.mock('../../src/client/openstack/login.js', async (original) => ({
  ...(await original<typeof import('../../src/client/openstack/login.js')>()),
  logIn: (...args: unknown[]) => logIn(...args),
}))
const {KeystoneSession} = await import('../../src/client/openstack/session.js')

const auth = {
  cloud: 'envvars',
  authType: 'password' as const,
  authUrl: 'http://keystone.invalid:5000/v3',
  username: 'admin',
  password: 'secret',
  projectName: 'admin',
  endpoint: 'http://placement.invalid:8778',
  interface: 'public' as const,
}

const dirs: string[] = []
const cacheDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-session-'))
  dirs.push(dir)
  return dir
}
afterEach(() => {
  logIn.mockReset()
  for (const dir of dirs.splice(0)) fs.rmSync(dir, {recursive: true, force: true})
})

describe('a Keystone session asked for by calls made at once', () => {
  it('logs in once, and every call gets that token', async () => {
    let answer: (login: unknown) => void = () => undefined
    logIn.mockImplementation(() => new Promise((resolve) => (answer = resolve)))
    const session = new KeystoneSession(auth, cacheDir())
    const asked = [session.session(), session.session(), session.session()]
    answer({token: 'tok-1', catalog: [], expires: Date.now() + 3_600_000})
    const sessions = await Promise.all(asked)
    expect(logIn).toHaveBeenCalledTimes(1)
    expect(sessions.map((s) => s.token)).toEqual(['tok-1', 'tok-1', 'tok-1'])
    expect(sessions[0].endpoint).toBe('http://placement.invalid:8778')
  })

  it('logs in again after a failed login, and the calls that shared it all fail', async () => {
    logIn.mockRejectedValueOnce(new Error('keystone unreachable'))
    logIn.mockResolvedValueOnce({token: 'tok-2', catalog: [], expires: Date.now() + 3_600_000})
    const session = new KeystoneSession(auth, cacheDir())
    const failed = await Promise.allSettled([session.session(), session.session()])
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    expect(logIn).toHaveBeenCalledTimes(1)
    expect((await session.session()).token).toBe('tok-2')
    expect(logIn).toHaveBeenCalledTimes(2)
  })
})
