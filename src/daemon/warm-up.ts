/**
 * A rehearsal of the requests a scheduler makes, run once the daemon serves and has a moment
 * with nothing to serve. V8 compiles a function to fast code only after it has run many times: a fresh daemon answered
 * its first thousand or so claims about twice as slowly as the next ones, and the first write
 * that changed a provider's shape several times as slowly. The rehearsal runs those paths
 * (providers, inventories, traits, aggregates, candidates, claims, moves, releases, usages,
 * lists) on a throwaway in-memory cloud, through its own server on loopback, as a client would
 * call them, so that real requests meet compiled code. Nothing of it touches the daemon's
 * database; real requests are served between its requests, and a stop ends it.
 */
import http from 'node:http'
import {randomUUID} from 'node:crypto'
import type {FastifyInstance} from 'fastify'
import {buildApp} from '../http/app.js'
import {loggerOptions, type LogLevel} from '../http/access-log.js'
import {ServiceState} from '../http/service-state.js'
import {Store} from '../store/store.js'

/** Claims in the rehearsal (each a candidates query and a PUT, with writes of other kinds between). */
const ROUNDS = 400
const PROVIDERS = 12
const AGGREGATE = 'f0f0f0f0-0000-4000-8000-00000000a99e'
const QUERY = `/allocation_candidates?resources=VCPU:1,MEMORY_MB:256,DISK_GB:10&member_of=${AGGREGATE}&required=HW_CPU_X86_AVX2&limit=5`

export interface WarmUp {
  /** Resolves when the rehearsal is over: its requests, or why it ended early. */
  readonly done: Promise<{requests: number; ms: number; stopped?: string; statements: string[]}>
  /** Ends the rehearsal at its next request (the daemon is stopping). */
  stop(): Promise<void>
}

/**
 * Starts the rehearsal once `after` resolves (the daemon had a moment with nothing to serve: its
 * set-up, an app and an in-memory database, would hold real requests); `level` is the daemon's
 * log level, so the same logging code runs (into nothing). `began` is told when its first
 * request goes.
 */
export function warmUp(
  level: LogLevel,
  rounds = ROUNDS,
  after: Promise<void> = Promise.resolve(),
  began: () => void = () => undefined,
): WarmUp {
  let stopping = false
  let stopped: () => void = () => undefined
  const stop = new Promise<void>((resolve) => (stopped = resolve))
  const done = (async () => {
    await Promise.race([after, stop])
    const started = performance.now()
    if (stopping) return {requests: 0, ms: 0, stopped: 'the daemon is stopping', statements: []}
    let requests = 0
    let store: Store | null = null
    let app: FastifyInstance | null = null
    const agent = new http.Agent({keepAlive: true, maxSockets: 1})
    try {
      store = await Store.open(':memory:')
      app = await buildApp({
        store,
        auth: 'noauth2',
        service: new ServiceState(),
        logger: loggerOptions(level, {write: () => undefined}, true),
      })
      await app.listen({host: '127.0.0.1', port: 0})
      const address = app.server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      const call = async (method: string, path: string, body?: unknown): Promise<unknown> => {
        if (stopping) throw new Stopped()
        if (requests++ === 0) began()
        return request(agent, port, method, path, body)
      }
      await rehearse(call, rounds)
      // The statements the rehearsal's writes and reads ran: the daemon's own connection
      // prepares them too (SQLite), or its first writes would compile them.
      return {requests, ms: performance.now() - started, statements: store.preparedTexts()}
    } catch (err) {
      // Whatever went wrong, the rehearsal only ends: the daemon serves as it would without it.
      return {
        requests,
        ms: performance.now() - started,
        stopped: err instanceof Stopped ? 'the daemon is stopping' : (err as Error).message,
        statements: [],
      }
    } finally {
      agent.destroy()
      await app?.close().catch(() => undefined)
      await store?.close().catch(() => undefined)
    }
  })()
  return {
    done,
    async stop() {
      stopping = true
      stopped()
      await done
    },
  }
}

class Stopped extends Error {}

type Call = (method: string, path: string, body?: unknown) => Promise<unknown>

/** The requests: a small cloud, then claims with the other writes and reads among them. */
async function rehearse(call: Call, rounds: number): Promise<void> {
  const providers: {uuid: string}[] = []
  for (let i = 0; i < PROVIDERS; i++) {
    const uuid = randomUUID()
    await call('POST', '/resource_providers', {name: `warm-up-${i}`, uuid})
    const inv = (await call('PUT', `/resource_providers/${uuid}/inventories`, {
      resource_provider_generation: 0,
      inventories: inventories(0),
    })) as {resource_provider_generation: number}
    const tr = (await call('PUT', `/resource_providers/${uuid}/traits`, {
      resource_provider_generation: inv.resource_provider_generation,
      traits: ['HW_CPU_X86_AVX2'],
    })) as {resource_provider_generation: number}
    await call('PUT', `/resource_providers/${uuid}/aggregates`, {
      resource_provider_generation: tr.resource_provider_generation,
      aggregates: [AGGREGATE],
    })
    providers.push({uuid})
  }
  const held: string[] = []
  for (let r = 0; r < rounds; r++) {
    const answer = (await call('GET', QUERY)) as {allocation_requests: {allocations: unknown}[]}
    const first = answer.allocation_requests[0]
    if (!first) break
    const consumer = randomUUID()
    const claim = {
      allocations: first.allocations,
      project_id: AGGREGATE,
      user_id: AGGREGATE,
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    }
    await call('PUT', `/allocations/${consumer}`, claim)
    held.push(consumer)
    if (r % 4 === 0) {
      // A write that changes a provider's shape (the candidates index follows it).
      const p = providers[r % PROVIDERS]
      const now = (await call('GET', `/resource_providers/${p.uuid}/inventories`)) as {resource_provider_generation: number}
      await call('PUT', `/resource_providers/${p.uuid}/inventories`, {
        resource_provider_generation: now.resource_provider_generation,
        inventories: inventories(r % 8 === 0 ? 1 : 0),
      })
      await call('GET', `/resource_providers/${p.uuid}/usages`)
    }
    if (r % 5 === 0) {
      // A move: the instance's allocations handed to a migration consumer, in one POST.
      const moved = held.shift()!
      const migration = randomUUID()
      const current = (await call('GET', `/allocations/${moved}`)) as {
        allocations: Record<string, {resources: Record<string, number>}>
        consumer_generation: number
      }
      await call('POST', '/allocations', {
        [moved]: {
          allocations: {},
          project_id: AGGREGATE,
          user_id: AGGREGATE,
          consumer_generation: current.consumer_generation,
          consumer_type: 'INSTANCE',
        },
        [migration]: {
          allocations: current.allocations,
          project_id: AGGREGATE,
          user_id: AGGREGATE,
          consumer_generation: null,
          consumer_type: 'MIGRATION',
        },
      })
      held.push(migration)
    }
    if (held.length > 40) await call('DELETE', `/allocations/${held.shift()}`)
    if (r % 20 === 0) await call('GET', '/resource_providers?resources=VCPU:1,MEMORY_MB:256,DISK_GB:10')
  }
}

function inventories(reserved: number) {
  return {
    VCPU: {total: 64, reserved, allocation_ratio: 4.0, max_unit: 64},
    MEMORY_MB: {total: 262144, max_unit: 262144},
    DISK_GB: {total: 4000, max_unit: 4000},
  }
}

function request(agent: http.Agent, port: number, method: string, path: string, body?: unknown): Promise<unknown> {
  const payload = body === undefined ? undefined : JSON.stringify(body)
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        agent,
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: {
          'x-auth-token': 'admin',
          'openstack-api-version': 'placement 1.39',
          accept: 'application/json',
          ...(payload === undefined ? {} : {'content-type': 'application/json', 'content-length': Buffer.byteLength(payload)}),
        },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          if ((res.statusCode ?? 500) >= 300)
            return reject(new Error(`${method} ${path.split('?')[0]} answered ${res.statusCode}: ${text.slice(0, 200)}`))
          try {
            resolve(text ? JSON.parse(text) : undefined)
          } catch (err) {
            reject(err)
          }
        })
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(payload)
  })
}
