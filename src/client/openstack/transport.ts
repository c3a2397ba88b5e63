/** HTTP to the placement endpoint a Keystone session gives, logging in again once on a 401. */
import type {ApiResponse, Transport} from '../client.js'
import {HttpTransport} from '../transports.js'
import {AuthenticationError, type KeystoneSession} from './session.js'

export class KeystoneTransport implements Transport {
  constructor(
    private readonly session: KeystoneSession,
    /** --url: the endpoint to use instead of the catalog's. */
    private readonly endpoint?: string,
  ) {}

  get description(): string {
    return this.endpoint ?? `placement of cloud ${this.session.auth.cloud}`
  }

  async send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<ApiResponse> {
    const s = await this.session.session()
    const res = await new HttpTransport(this.endpoint ?? s.endpoint, s.token).send(method, path, headers, body)
    if (res.status !== 401 || s.expires === Infinity) return res
    // Revoked, or expired before its time: one new login, and the request once more.
    const again = await this.session.renew()
    const retried = await new HttpTransport(this.endpoint ?? again.endpoint, again.token).send(method, path, headers, body)
    if (retried.status === 401)
      throw new AuthenticationError(`the placement endpoint refused a new token from Keystone (cloud ${this.session.auth.cloud})`)
    return retried
  }

  async close(): Promise<void> {}

  /** The endpoint and a token of the session (logged in if it was not). */
  async address(): Promise<{url: string; token: string | undefined}> {
    const s = await this.session.session()
    return {url: (this.endpoint ?? s.endpoint).replace(/\/+$/, ''), token: s.token}
  }
}
