/**
 * A serving daemon as a node of its database (store/node-registry.ts): it registers its release,
 * the schema range it serves, host, pid and URL once it serves, beats every few seconds (each
 * beat also judges the schema again: health and metrics say when a newer release's contract
 * moved the database past this release), and removes itself when it stops (Store.close).
 */
import os from 'node:os'
import type {FastifyBaseLogger} from 'fastify'
import {NODE_BEAT_MS} from '../store/node-registry.js'
import {RELEASE} from '../store/release.js'
import {SCHEMA_RANGE} from '../store/schema.js'
import type {Store} from '../store/store.js'

/** Registers the node and beats until stopped; a database that does not answer now is beaten again later. */
export async function startHeartbeat(store: Store, url: string, log: FastifyBaseLogger): Promise<{stop(): void}> {
  const info = {
    release: RELEASE,
    schemaFrom: SCHEMA_RANGE.from,
    schemaTo: SCHEMA_RANGE.to,
    host: os.hostname(),
    pid: process.pid,
    url,
    startedAt: Date.now(),
  }
  try {
    await store.join(info)
  } catch (err) {
    // The next beat writes the row (a beat registers a node whose row is missing).
    log.warn({event: 'node_register_failed', cause: (err as Error).message}, `could not register this node yet: ${(err as Error).message}`)
  }
  const timer = setInterval(() => void store.beat().catch(() => undefined), NODE_BEAT_MS)
  timer.unref()
  return {stop: () => clearInterval(timer)}
}
