/** A node watched as it follows the journal, and the seed cloud, for the journal-shapes tests (SQLite in test/api, PostgreSQL and MariaDB in test/external). */
import {applyBatch} from '../../src/core/batch.js'
import {Store, type StoreObserver} from '../../src/store/store.js'
import {tempFiles} from './temp-files.js'

export const newFile = tempFiles('placemat-shapes-')
export const P = 'a0000000-0000-4000-8000-000000000001'
export const Q = 'a0000000-0000-4000-8000-000000000002'
export const C = 'c0000000-0000-4000-8000-000000000001'

/** A store whose observer keeps what it was told. */
export async function watched(target: string): Promise<{store: Store; reloads: string[]; catchUps: string[]; retries: string[]}> {
  const store = await Store.open(target)
  const seen = {store, reloads: [] as string[], catchUps: [] as string[], retries: [] as string[]}
  const observer: StoreObserver = {
    reloaded: (reason) => seen.reloads.push(reason),
    caughtUp: (_keys, _s, from) => seen.catchUps.push(from),
    writeRetried: (why) => seen.retries.push(why),
  }
  store.observer = observer
  return seen
}

export const seed = (store: Store) =>
  store.write((s, now) =>
    applyBatch(s, now, [
      {op: 'create_provider', uuid: P, name: 'p', parent_provider_uuid: null},
      {op: 'set_inventories', uuid: P, inventories: {VCPU: {total: 8}}},
      {op: 'create_provider', uuid: Q, name: 'q', parent_provider_uuid: null},
    ]),
  )
