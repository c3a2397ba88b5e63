/**
 * Which placemat this is, for the schema's compatibility contract (schema-contract.ts): the
 * release a node registers under, names in its refusals, and a contract records as the oldest
 * that may serve a database. package.json's version (test/unit/release.test.ts holds them equal).
 */
import type {Kysely} from 'kysely'

export const RELEASE = '0.2.0'

/** Orders two releases (`major.minor.patch`, a pre-release tag after `-` sorting before its release): <0, 0 or >0. */
export function compareReleases(a: string, b: string): number {
  const parse = (r: string) => {
    const [core, pre] = r.trim().replace(/^v/, '').split('-', 2)
    return {parts: core.split('.').map((x) => Number(x) || 0), pre: pre ?? null}
  }
  const x = parse(a)
  const y = parse(b)
  for (let i = 0; i < Math.max(x.parts.length, y.parts.length); i++) {
    const d = (x.parts[i] ?? 0) - (y.parts[i] ?? 0)
    if (d) return d
  }
  if (x.pre === y.pre) return 0
  if (x.pre === null) return 1
  if (y.pre === null) return -1
  return x.pre < y.pre ? -1 : 1
}

/** placemat_meta's key of the contract's record: the oldest release that may serve the database. */
export const MIN_RELEASE_KEY = 'min_release'

/** What a contract records: the oldest release that may serve the database, and the migration that made it so. */
export interface MinRelease {
  release: string
  migration: string
}

/** The record as placemat_meta keeps it (JSON); null for a value no release wrote. */
export function parseMinRelease(value: string | null | undefined): MinRelease | null {
  if (!value) return null
  try {
    const v = JSON.parse(value) as Partial<MinRelease>
    if (typeof v.release === 'string' && v.release)
      return {release: v.release, migration: typeof v.migration === 'string' ? v.migration : '?'}
  } catch {
    // a bare release, as a person might write it
    if (/^\d+(\.\d+)*(-[\w.]+)?$/.test(value.trim())) return {release: value.trim(), migration: '?'}
  }
  return null
}

/**
 * A contract migration's last step: records `marker` as the database's oldest release, unless one
 * at least as new is recorded already (a contract never lowers it).
 */
export async function recordMinRelease(db: Kysely<any>, marker: MinRelease): Promise<void> {
  const row = await db.selectFrom('placemat_meta').select('value').where('key', '=', MIN_RELEASE_KEY).executeTakeFirst()
  const have = parseMinRelease(row?.value as string | undefined)
  if (have && compareReleases(have.release, marker.release) >= 0) return
  const value = JSON.stringify(marker)
  if (row) await db.updateTable('placemat_meta').set({value}).where('key', '=', MIN_RELEASE_KEY).execute()
  else await db.insertInto('placemat_meta').values({key: MIN_RELEASE_KEY, value}).execute()
}
