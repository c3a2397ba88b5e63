/**
 * Read-modify-write against Placement's generations: a plain "set" or "add" should just
 * work when another writer bumped the generation in between, so the whole read and write
 * is run again on 409 placement.concurrent_update (a few times, with a short backoff).
 */
import {ApiError} from '../../client/client.js'
import {ErrorCode} from '../../core/errors.js'

export function isConcurrentUpdate(err: unknown): boolean {
  return err instanceof ApiError && err.status === 409 && err.code === ErrorCode.CONCURRENT_UPDATE
}

export async function retryOnConcurrentUpdate<T>(attempt: () => Promise<T>, tries = 5): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await attempt()
    } catch (err) {
      if (i >= tries || !isConcurrentUpdate(err)) throw err
      await backoff(i)
    }
  }
}

/** The pause before attempt `attempt + 1`: a little longer each time, with jitter so racing writers spread out. */
export function backoff(attempt: number): Promise<void> {
  return new Promise((r) => setTimeout(r, 10 * attempt + Math.floor(Math.random() * 20)))
}
