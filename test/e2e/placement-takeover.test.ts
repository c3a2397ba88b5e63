/**
 * Taking over a running Placement (Debian's placement-api on SQLite; skipped, saying so, where
 * it is not installed): a cloud made through Placement's API is read straight from its database
 * (`import --from-placement`), and placemat then answers every provider, consumer and candidates
 * query as Placement did, lists unordered. Placement's file is left byte-identical.
 */
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {TRAITS_ADDED_SINCE_2_9_0} from '../../src/core/standard.js'
import {buildApp} from '../../src/http/app.js'
import {Store} from '../../src/store/store.js'
import {placemat} from '../helpers/cli.js'
import {AGG_SHARED_UPPER, answers, fillCloud, type Call, type CloudIds} from '../helpers/placement-cloud.js'
import {placementAvailable, startPlacement, type ReferencePlacement} from '../helpers/placement.js'

if (!placementAvailable) console.warn('placement-takeover.test.ts: no placement-api here (apt-get install placement-api uwsgi-plugin-python3): skipped')

/** GET /traits's answer without the standard traits os-traits added after 2.9.0 (Placement 8.0.0's). */
const withoutNewerTraits = (answer: any) => ({...answer, body: {traits: answer.body.traits.filter((t: string) => !TRAITS_ADDED_SINCE_2_9_0.includes(t))}})

const sha = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex')

/** placemat's answers on the database file `file`, through inject() as noauth2's admin. */
async function placematCall(file: string): Promise<{call: Call; close: () => Promise<void>}> {
  const store = await Store.open(file)
  const app = await buildApp({store, auth: 'noauth2'})
  const call: Call = async (method, p, body, version = '1.39') => {
    const res = await app.inject({
      method: method as any,
      url: p,
      headers: {'x-auth-token': 'admin', 'openstack-api-version': `placement ${version}`, ...(body !== undefined ? {'content-type': 'application/json'} : {})},
      payload: body === undefined ? undefined : JSON.stringify(body),
    })
    return {status: res.statusCode, body: res.body ? JSON.parse(res.body) : null}
  }
  return {call, close: async () => (await app.close(), await store.close())}
}

describe.skipIf(!placementAvailable)('taking over a running Placement', () => {
  let placement: ReferencePlacement
  let ids: CloudIds
  let dir: string
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-takeover-'))
    placement = await startPlacement()
    ids = await fillCloud((m, p, b, v) => placement.call(m, p, b, v))
  }, 180_000)
  afterAll(async () => {
    await placement?.stop()
    fs.rmSync(dir, {recursive: true, force: true})
  })

  it('import --from-placement (SQLite) answers as Placement did, leaving its file untouched', async () => {
    const file = path.join(placement.dir, 'placement.db')
    const theirs = await answers((m, p, b, v) => placement.call(m, p, b, v), ids)
    const before = sha(file)
    const target = path.join(dir, 'placemat.db')
    const r = await placemat(['import', '--from-placement', `sqlite:///${file}`, '--db', target, '--json'], {env: {PLACEMAT_HOME: dir}})
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({providers: ids.providers.length, consumers: ids.consumers.length, placement_schema: expect.stringContaining('8.0.0')})
    expect(sha(file)).toBe(before)
    expect(fs.existsSync(`${file}-wal`)).toBe(false)
    const ours = await placematCall(target)
    try {
      const mine = await answers(ours.call, ids)
      for (const key of Object.keys(theirs)) {
        if (key === '/traits') continue
        // The one difference: Placement on SQLite matches an aggregate only in the case it was
        // sent in; placemat keeps and matches ids in canonical form, so both forms find it.
        const lower = AGG_SHARED_UPPER.toLowerCase()
        expect(mine[key], key).toEqual(key.includes(lower) ? theirs[key.replace(lower, AGG_SHARED_UPPER)] : theirs[key])
      }
      // Placement 8.0.0 knows os-traits 2.9.0; placemat lists 3.9.0's too.
      expect(withoutNewerTraits(mine['/traits'])).toEqual(theirs['/traits'])
    } finally {
      await ours.close()
    }
  }, 120_000)

  it("commands given Placement's database as theirs refuse it and leave it byte-identical", async () => {
    const file = path.join(placement.dir, 'placement.db')
    const before = sha(file)
    for (const args of [['provider', 'list'], ['export'], ['db', 'status'], ['provider', 'create', 'x']]) {
      const r = await placemat([...args, '--db', file], {env: {PLACEMAT_HOME: dir}})
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2)
      expect(r.stderr).toContain('is an OpenStack Placement database, not placemat\'s: nothing was changed in it')
      expect(r.stderr).toContain('import --from-placement')
    }
    expect(sha(file)).toBe(before)
    expect(fs.existsSync(`${file}-wal`)).toBe(false)
  })

  it('refuses what is not a Placement database placemat reads, naming what it found', async () => {
    const plain = path.join(dir, 'plain.db')
    await placemat(['db', 'init', '--db', plain], {env: {PLACEMAT_HOME: dir}})
    const r = await placemat(['import', '--from-placement', `sqlite:///${plain}`, '--db', path.join(dir, 'x.db')], {env: {PLACEMAT_HOME: dir}})
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('not an OpenStack Placement database')
    expect(fs.existsSync(path.join(dir, 'x.db'))).toBe(false)
    const bad = await placemat(['import', '--from-placement', 'oracle://x/y', '--db', path.join(dir, 'x.db')], {env: {PLACEMAT_HOME: dir}})
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('MySQL/MariaDB, PostgreSQL or SQLite')
  })
})
