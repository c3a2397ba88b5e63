import type {FastifyInstance} from 'fastify'
import {buildApp} from '../../src/http/app.js'
import type {AppOptions} from '../../src/http/context.js'
import {Store} from '../../src/store/store.js'

export interface TestApi {
  app: FastifyInstance
  store: Store
  call(
    method: string,
    url: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{status: number; body: any; headers: Record<string, any>}>
  close(): Promise<void>
}

/** An app on an in-memory database, called through inject() as an admin at the latest microversion. */
export async function testApi(options: Partial<AppOptions> = {}): Promise<TestApi> {
  const store = await Store.open(':memory:')
  const app = await buildApp({store, auth: 'noauth2', ...options})
  return {
    app,
    store,
    async call(method, url, body, headers = {}) {
      const res = await app.inject({
        method: method as any,
        url,
        headers: {
          'x-auth-token': 'admin',
          'openstack-api-version': 'placement latest',
          ...(body !== undefined ? {'content-type': 'application/json'} : {}),
          ...headers,
        },
        payload: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      })
      let parsed: unknown = res.body
      try {
        parsed = res.body ? JSON.parse(res.body) : undefined
      } catch {
        // not JSON
      }
      return {status: res.statusCode, body: parsed, headers: res.headers}
    },
    async close() {
      await app.close()
      await store.close()
    },
  }
}

export {inv} from './records.js'
