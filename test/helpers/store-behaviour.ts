/**
 * The store's guarantees, the same on each backend: `fresh()` gives a new, empty database to
 * open. test/api/store.test.ts runs them on SQLite, test/external/store-postgres.test.ts on PostgreSQL and
 * test/external/store-mariadb.test.ts on MariaDB.
 */
import {execFile} from 'node:child_process'
import path from 'node:path'
import {promisify} from 'node:util'
import {createProvider, updateProvider} from '../../src/core/placement/providers.js'
import {deleteAllocations, putAllocationErrors, writeAllocations} from '../../src/core/placement/allocations.js'
import {setInventories} from '../../src/core/placement/inventories.js'
import {PlacementError} from '../../src/core/errors.js'
import {STANDARD_RESOURCE_CLASSES, STANDARD_TRAITS} from '../../src/core/standard.js'
import {buildApp} from '../../src/http/app.js'
import {Store} from '../../src/store/store.js'
import type {State} from '../../src/core/state/state.js'
import {describe, expect, it} from 'vitest'

const run = promisify(execFile)

export function describeStore(kind: string, fresh: () => Promise<string>): void {
  describe(`Store on ${kind}`, () => {
    it('starts a new database with exactly the standard classes and traits', async () => {
      const store = await Store.open(await fresh())
      expect([...store.state.classes.keys()]).toEqual([...STANDARD_RESOURCE_CLASSES])
      expect(store.state.traits.size).toBe(STANDARD_TRAITS.length)
      expect(store.state.providers.size).toBe(0)
      await store.close()
    })

    it('persists committed writes and reloads them', async () => {
      const file = await fresh()
      const a = await Store.open(file)
      await a.write((s, now) => createProvider(s, now, {name: 'cn1', uuid: '11111111-1111-1111-1111-111111111111'}))
      await a.close()
      const b = await Store.open(file)
      expect(b.state.providerByName.get('cn1')?.uuid).toBe('11111111-1111-1111-1111-111111111111')
      await b.close()
    })

    it('writes nothing, in the database or in memory, when the write function throws', async () => {
      const file = await fresh()
      const a = await Store.open(file)
      await expect(
        a.write((s, now) => {
          createProvider(s, now, {name: 'half', uuid: '22222222-2222-2222-2222-222222222222'})
          throw new PlacementError(400, 'changed my mind')
        }),
      ).rejects.toThrow('changed my mind')
      expect(a.state.providers.size).toBe(0)
      await a.close()
      const b = await Store.open(file)
      expect(b.state.providers.size).toBe(0)
      await b.close()
    })

    it('sees what another connection committed before its next read and write', async () => {
      const file = await fresh()
      const a = await Store.open(file)
      const b = await Store.open(file)
      await a.write((s, now) => createProvider(s, now, {name: 'from-a'}))
      expect((await b.refresh()).providerByName.has('from-a')).toBe(true)
      await b.write((s, now) => createProvider(s, now, {name: 'from-b'}))
      expect([...(await a.refresh()).providers.values()].map((p) => p.name)).toEqual(['from-a', 'from-b'])
      await a.close()
      await b.close()
    })

    it('writes one after another on what it holds while nobody else commits, and catches up under the lock when somebody did', async () => {
      const file = await fresh()
      const a = await Store.open(file)
      const b = await Store.open(file)
      const uuid = '66666666-6666-6666-6666-666666666666'
      await a.write((s, now) => createProvider(s, now, {name: 'cn', uuid}))
      for (let i = 0; i < 3; i++) await a.write((s, now) => createProvider(s, now, {name: `a${i}`}))
      await b.refresh()
      await b.write((s, now) => setInventories(s, now, uuid, {resource_provider_generation: 0, inventories: {VCPU: {total: 4}}}, {}))
      // No read between: the write itself must see b's commit (generation 1 now), and refuse generation 0,
      // which only the State knows to check (the database would take the rows).
      const stale = a.write((s, now) =>
        setInventories(s, now, uuid, {resource_provider_generation: 0, inventories: {VCPU: {total: 8}}}, {}),
      )
      await expect(stale).rejects.toMatchObject({status: 409})
      await a.write((s, now) => createProvider(s, now, {name: 'a3'}))
      const seen = (st: State) => [
        [...st.providers.values()].map((p) => p.name).sort(),
        st.providers.get(uuid)!.inventories.get('VCPU')?.total,
      ]
      expect(seen(await a.refresh())).toEqual([['a0', 'a1', 'a2', 'a3', 'cn'], 4])
      expect(seen(await b.refresh())).toEqual([['a0', 'a1', 'a2', 'a3', 'cn'], 4])
      await Promise.all([a.close(), b.close()])
    })

    it('shows every read what another process committed before the read arrived, reads arriving together or during its own writes', async () => {
      const file = await fresh()
      const a = await Store.open(file)
      const b = await Store.open(file)
      for (let i = 0; i < 5; i++) {
        await a.write((s, now) => createProvider(s, now, {name: `a${i}`}))
        const own = b.write((s, now) => createProvider(s, now, {name: `b${i}`}))
        const reads = await Promise.all(Array.from({length: 8}, () => b.read((s) => s.providerByName.has(`a${i}`))))
        expect(reads).toEqual(Array(8).fill(true))
        await own
        expect(await a.read((s) => s.providerByName.has(`b${i}`))).toBe(true)
      }
      await Promise.all([a.close(), b.close()])
    })

    it('decides a write again when another process committed first, never on what it had not seen', async () => {
      const file = await fresh()
      const a = await Store.open(file)
      const b = await Store.open(file)
      const uuid = '55555555-5555-5555-5555-555555555555'
      await a.write((s, now) => createProvider(s, now, {name: 'cn', uuid}))
      await b.refresh()
      const retried: string[] = []
      b.observer = {writeRetried: (why) => retried.push(why)}
      // b has not looked since: a refusal on what it holds (no such name) would be wrong, and so
      // would a success (the name is taken now).
      await a.write((s, now) => updateProvider(s, now, uuid, {name: 'renamed'}, {allowReparenting: false}))
      await expect(b.write((s, now) => createProvider(s, now, {name: 'renamed'}))).rejects.toThrow(/already exists/)
      expect([...b.state.providerByName.keys()]).toEqual(['renamed'])
      // b holds 'renamed' taken: a refusal, unless the name was freed meanwhile (it was).
      await a.write((s, now) => updateProvider(s, now, uuid, {name: 'again'}, {allowReparenting: false}))
      await b.write((s, now) => createProvider(s, now, {name: 'renamed'}))
      await a.write((s, now) => updateProvider(s, now, uuid, {name: 'third'}, {allowReparenting: false}))
      await b.write((s, now) => updateProvider(s, now, uuid, {name: 'from-b'}, {allowReparenting: false}))
      // On PostgreSQL and MariaDB b, having just applied a's commits, asks what a committed before each try:
      // none of its tries is overtaken.
      expect(retried).toEqual([])
      const fresh2 = await Store.open(file)
      expect([...fresh2.state.providerByName.keys()].sort()).toEqual(['from-b', 'renamed'])
      expect([...(await a.refresh()).providerByName.keys()].sort()).toEqual(['from-b', 'renamed'])
      expect([...b.state.providerByName.keys()].sort()).toEqual(['from-b', 'renamed'])
      await Promise.all([a.close(), b.close(), fresh2.close()])
    })

    it.runIf(kind !== 'SQLite')(
      'commits an allocation write made on a State others moved past, unless they touched its consumers or providers',
      async () => {
        const file = await fresh()
        const a = await Store.open(file)
        const b = await Store.open(file)
        const [x, y] = ['66666666-0000-0000-0000-00000000000a', '66666666-0000-0000-0000-00000000000b']
        await a.write((s, now) => {
          for (const uuid of [x, y]) {
            createProvider(s, now, {name: uuid.slice(-1), uuid})
            setInventories(s, now, uuid, {resource_provider_generation: 0, inventories: {VCPU: {total: 4}}}, {})
          }
        })
        await b.refresh()
        const retried: string[] = []
        b.observer = {writeRetried: (why) => retried.push(why)}
        const claim = (st: Store, consumer: string, provider: string) =>
          st.write(
            (s, now) =>
              writeAllocations(
                s,
                now,
                [{uuid: consumer, allocations: new Map([[provider, new Map([['VCPU', 1]])]]), project: 'p', user: 'u'}],
                {checkGeneration: false, ...putAllocationErrors(consumer)},
              ),
            {selfContained: true},
          )
        const usage = async (provider: string) =>
          (await Store.open(file).then(async (f) => [f.state.providers.get(provider)!.usages.get('VCPU'), await f.close()]))[0]
        // a claims on x while b looks elsewhere; b, on what it held before, claims on y: nothing it
        // depends on moved, so it commits at once, and holds a's claim too.
        await a.write((s) => s) // a write of nothing: b stays where it was
        await new Promise((r) => setTimeout(r, 1100)) // b has not applied another's commit for a while: it asks nothing first
        await claim(a, '77777777-0000-0000-0000-000000000001', x)
        await claim(b, '77777777-0000-0000-0000-000000000002', y)
        expect(retried).toEqual([])
        expect(b.state.consumers.has('77777777-0000-0000-0000-000000000001')).toBe(true)
        // Now both on y, b again on what it held: a's claim touched y, so b's is decided again.
        await new Promise((r) => setTimeout(r, 1100))
        await claim(a, '77777777-0000-0000-0000-000000000003', y)
        await claim(b, '77777777-0000-0000-0000-000000000004', y)
        expect(retried).toEqual(['moved'])
        expect(await usage(y)).toBe(3)
        expect(await usage(x)).toBe(1)
        expect(b.state.providers.get(y)!.usages.get('VCPU')).toBe(3)
        expect(b.state.providers.get(y)!.generation).toBe((await a.refresh()).providers.get(y)!.generation)
        await Promise.all([a.close(), b.close()])
      },
      30_000,
    )

    it.runIf(kind !== 'SQLite')(
      'decides a refusal again when the allocation write it was grouped with committed after others',
      async () => {
        const file = await fresh()
        const a = await Store.open(file)
        const b = await Store.open(file)
        const [x, y] = ['88888888-0000-0000-0000-00000000000a', '88888888-0000-0000-0000-00000000000b']
        await a.write((s, now) => {
          for (const uuid of [x, y]) {
            createProvider(s, now, {name: uuid.slice(-1), uuid})
            setInventories(s, now, uuid, {resource_provider_generation: 0, inventories: {VCPU: {total: 4}}}, {})
          }
        })
        await b.refresh()
        const claim = (st: Store, consumer: string, provider: string) =>
          st.write(
            (s, now) =>
              writeAllocations(
                s,
                now,
                [{uuid: consumer, allocations: new Map([[provider, new Map([['VCPU', 1]])]]), project: 'p', user: 'u'}],
                {checkGeneration: false, ...putAllocationErrors(consumer)},
              ),
            {selfContained: true},
          )
        await new Promise((r) => setTimeout(r, 1100)) // b has not applied another's commit for a while: it asks nothing first
        // a acknowledges a claim; then b gets, in one group, a claim elsewhere and the release of a's
        // claim. b has not seen a's claim: the release, refused on what b held, must be decided again.
        const ackedOnA = '99999999-0000-0000-0000-000000000001'
        await claim(a, ackedOnA, x)
        const [own, release] = await Promise.allSettled([
          claim(b, '99999999-0000-0000-0000-000000000002', y),
          b.write((s) => deleteAllocations(s, ackedOnA), {selfContained: true}),
        ])
        expect(own.status).toBe('fulfilled')
        expect(release.status, String((release as PromiseRejectedResult).reason)).toBe('fulfilled')
        const after = await Store.open(file)
        expect(after.state.consumers.has(ackedOnA)).toBe(false)
        expect(after.state.providers.get(x)!.usages.get('VCPU') ?? 0).toBe(0)
        await Promise.all([a.close(), b.close(), after.close()])
      },
      30_000,
    )

    it('keeps the generation bumps of allocation writes', async () => {
      const file = await fresh()
      const a = await Store.open(file)
      const app = await buildApp({store: a, auth: 'noauth2'})
      const headers = {'x-auth-token': 'admin', 'openstack-api-version': 'placement latest', 'content-type': 'application/json'}
      const rp = '33333333-3333-3333-3333-333333333333'
      await app.inject({method: 'POST', url: '/resource_providers', headers, payload: JSON.stringify({name: 'cn', uuid: rp})})
      await app.inject({
        method: 'PUT',
        url: `/resource_providers/${rp}/inventories`,
        headers,
        payload: JSON.stringify({resource_provider_generation: 0, inventories: {VCPU: {total: 8}}}),
      })
      for (let i = 0; i < 3; i++) {
        const res = await app.inject({
          method: 'PUT',
          url: `/allocations/4444444${i}-4444-4444-4444-444444444444`,
          headers,
          payload: JSON.stringify({
            allocations: {[rp]: {resources: {VCPU: 1}}},
            project_id: 'p',
            user_id: 'u',
            consumer_generation: null,
            consumer_type: 'INSTANCE',
          }),
        })
        expect(res.statusCode, res.body).toBe(204)
      }
      const generation = a.state.providers.get(rp)!.generation
      expect(generation).toBe(4)
      await app.close()
      await a.close()
      const b = await Store.open(file)
      expect(b.state.providers.get(rp)!.generation).toBe(generation)
      expect(b.state.providers.get(rp)!.usages.get('VCPU')).toBe(3)
      await b.close()
    })

    it('loses no update when two processes write the same provider at once', async () => {
      const file = await fresh()
      const uuid = '33333333-3333-3333-3333-333333333333'
      const store = await Store.open(file)
      await store.write((s, now) => createProvider(s, now, {name: 'shared', uuid}))
      await store.close()
      const writer = path.resolve('test/helpers/bump-writer.mjs')
      const [x, y] = await Promise.all([
        run(process.execPath, [writer, file, uuid, '60']),
        run(process.execPath, [writer, file, uuid, '60']),
      ])
      const seen = [...JSON.parse(x.stdout), ...JSON.parse(y.stdout)].sort((m, n) => m - n)
      expect(seen).toEqual(Array.from({length: 120}, (_, i) => i + 1))
      const after = await Store.open(file)
      expect(after.state.providers.get(uuid)?.generation).toBe(120)
      await after.close()
    })
  })
}
