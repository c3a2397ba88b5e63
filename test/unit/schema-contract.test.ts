/**
 * The schema's compatibility contract (store/schema-contract.ts, store/release.ts): which
 * databases a release serves, the phases of the migrations, and the release this is. Pure
 * functions, no database.
 */
import fs from 'node:fs'
import {describe, expect, it} from 'vitest'
import {RELEASE, compareReleases, parseMinRelease} from '../../src/store/release.js'
import {BASELINE, PHASES, SCHEMA_RANGE, migrations} from '../../src/store/schema.js'
import {judgeSchema, knownMigrations, lastExpand, pendingUpTo, phaseOf} from '../../src/store/schema-contract.js'

const known = knownMigrations()
const baseline = known.filter((m) => m <= BASELINE)
const DB = 'postgresql://placemat@db/placemat'

describe('the release', () => {
  it("is package.json's version", () => {
    expect(RELEASE).toBe(JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version)
  })

  it('orders releases by their numbers, a pre-release before its release', () => {
    expect(compareReleases('0.2.0', '0.10.0')).toBeLessThan(0)
    expect(compareReleases('1.0.0', '0.99.9')).toBeGreaterThan(0)
    expect(compareReleases('0.2.0', '0.2')).toBe(0)
    expect(compareReleases('0.3.0-rc1', '0.3.0')).toBeLessThan(0)
  })

  it("reads the contract's record as a contract writes it, or a bare release; nothing else", () => {
    expect(parseMinRelease('{"release":"0.3.0","migration":"0015_x"}')).toEqual({release: '0.3.0', migration: '0015_x'})
    expect(parseMinRelease('0.3.0')).toEqual({release: '0.3.0', migration: '?'})
    expect(parseMinRelease('nonsense')).toBeNull()
    expect(parseMinRelease(undefined)).toBeNull()
  })
})

describe('the phases', () => {
  it("0001 to 0011 are the baseline (placemat 0.1.0); every later migration is tagged, a release's contracts after its expands", () => {
    expect(baseline.at(-1)).toBe('0011_change_images')
    for (const m of baseline) expect(phaseOf(m)).toBe('baseline')
    const later = known.filter((m) => m > BASELINE)
    for (const m of later) expect(PHASES[m], m).toBeDefined()
    for (const release of new Set(Object.values(PHASES).map((p) => p.release))) {
      const own = later.filter((m) => PHASES[m].release === release)
      const firstContract = own.findIndex((m) => PHASES[m].phase === 'contract')
      if (firstContract >= 0)
        expect(
          own.slice(firstContract).every((m) => PHASES[m].phase === 'contract'),
          release,
        ).toBe(true)
    }
    expect(Object.keys(PHASES).every((m) => m in migrations)).toBe(true)
  })

  it('this release: a real expand and contract pair, and the range it serves', () => {
    expect(phaseOf('0012_nodes')).toBe('expand')
    expect(phaseOf('0013_keyed_check_v2')).toBe('expand')
    expect(phaseOf('0014_retire_keyed_check_v1')).toBe('contract')
    expect(SCHEMA_RANGE).toEqual({from: '0013_keyed_check_v2', to: known.at(-1)})
    expect(lastExpand()).toBe('0013_keyed_check_v2')
    expect(pendingUpTo({applied: baseline, minRelease: null}, '0013_keyed_check_v2')).toEqual(['0012_nodes', '0013_keyed_check_v2'])
  })
})

describe('which databases this release serves', () => {
  const expanded = known.filter((m) => phaseOf(m) !== 'contract')

  it("serves its schema whole, and before its own contract; with a newer release's expands too", () => {
    expect(judgeSchema({applied: known, minRelease: {release: RELEASE, migration: known.at(-1)!}}, DB)).toMatchObject({
      serves: true,
      refusal: null,
    })
    expect(judgeSchema({applied: expanded, minRelease: null}, DB)).toMatchObject({
      serves: true,
      pending: {contract: ['0014_retire_keyed_check_v1']},
    })
    expect(judgeSchema({applied: [...known, '9000_newer_expand'], minRelease: null}, DB)).toMatchObject({
      serves: true,
      unknown: ['9000_newer_expand'],
    })
  })

  it('refuses while its own expands are pending, pointing at db upgrade --expand', () => {
    const v = judgeSchema({applied: baseline, minRelease: null}, DB)
    expect(v.serves).toBe(false)
    expect(v.refusal).toBe(
      `database ${DB} has schema migrations pending that placemat ${RELEASE} needs (0012_nodes, 0013_keyed_check_v2); ` +
        `run \`placemat db upgrade --expand --db ${DB}\` first (the nodes serving it may keep serving)`,
    )
  })

  it('refuses a database older than the baseline, pointing at a plain db upgrade', () => {
    expect(judgeSchema({applied: ['0001_initial'], minRelease: null}, DB).refusal).toContain(
      `run \`placemat db upgrade --db ${DB}\` first, with no daemon serving it`,
    )
  })

  it('refuses a database a newer release contracted, naming both releases', () => {
    const v = judgeSchema({applied: [...known, '0015_later'], minRelease: {release: '0.3.0', migration: '0015_later'}}, DB)
    expect(v.serves).toBe(false)
    expect(v.refusal).toBe(
      `database ${DB} was contracted by placemat 0.3.0 (0015_later): it needs placemat 0.3.0 or later; this is placemat ${RELEASE}`,
    )
    // An older release's contract is no obstacle.
    expect(judgeSchema({applied: known, minRelease: {release: '0.1.9', migration: 'x'}}, DB).serves).toBe(true)
  })
})
