/**
 * GET /placemat/v1/capacity and the flavor gauges of GET /metrics, from a daemon's flavor catalog:
 * the core's headroom of the State as it is now, the same as the command line works it out.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {FlavorCatalog} from '../../src/http/flavor-catalog.js'
import {testApi, type TestApi} from '../helpers/http-helpers.js'

const U = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`

describe('capacity from the daemon', () => {
  let dir: string
  let api: TestApi
  let bare: TestApi
  let catalog: FlavorCatalog
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-capacity-'))
    const file = path.join(dir, 'flavors.yaml')
    fs.writeFileSync(file, '- {name: small, vcpus: 1, ram: 1024}\n- {name: big, vcpus: 4, ram: 4096, properties: {"hw:numa_nodes": "1"}}\n')
    catalog = new FlavorCatalog(file)
    expect(catalog.load()).toBe(2)
    api = await testApi({flavors: catalog})
    bare = await testApi()
    for (const [i, cpus] of [
      [1, 6],
      [2, 6],
    ]) {
      expect((await api.call('POST', '/resource_providers', {name: `cn${i}`, uuid: U(i)})).status).toBe(200)
      expect(
        (
          await api.call('PUT', `/resource_providers/${U(i)}/inventories`, {
            resource_provider_generation: 0,
            inventories: {VCPU: {total: cpus}, MEMORY_MB: {total: 16384}},
          })
        ).status,
      ).toBe(200)
    }
  })
  afterAll(async () => {
    await api.close()
    await bare.close()
    fs.rmSync(dir, {recursive: true, force: true})
  })

  it('answers the headroom of its catalog, narrowed by flavor and level', async () => {
    const r = await api.call('GET', '/placemat/v1/capacity?level=host&level=cloud')
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    const row = (level: string, name: string, flavor: string) =>
      r.body.domains.find((d: any) => d.level === level && d.name === name && d.flavor === flavor)
    expect(row('host', 'cn1', 'small')).toMatchObject({fit: 6, pooled: 6, fragmentation_loss: 0, disabled_fit: 0})
    expect(row('cloud', 'cloud', 'big')).toMatchObject({fit: 2, pooled: 3, fragmentation_loss: 1})
    expect(r.body.warnings).toEqual([{flavor: 'big', warning: 'hw:numa_nodes: judged by Nova outside Placement, not modelled'}])
    const one = await api.call('GET', '/placemat/v1/capacity?flavor=small&level=cloud')
    expect(one.body.domains).toEqual([
      {level: 'cloud', name: 'cloud', flavor: 'small', fit: 12, pooled: 12, fragmentation_loss: 0, disabled_fit: 0, binding: 'VCPU'},
    ])
    // A claim is seen by the next answer.
    expect(
      (
        await api.call('PUT', `/allocations/${U(100)}`, {
          allocations: {[U(1)]: {resources: {VCPU: 2, MEMORY_MB: 1024}}},
          project_id: 'p',
          user_id: 'u',
          consumer_generation: null,
          consumer_type: 'INSTANCE',
        })
      ).status,
    ).toBe(204)
    expect((await api.call('GET', '/placemat/v1/capacity?flavor=small&level=cloud')).body.domains[0].fit).toBe(10)
  })

  it('answers every host lost in turn (without_each), its consumers placed again, and the worst', async () => {
    const r = await api.call('GET', '/placemat/v1/capacity?without_each=host&flavor=small')
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    // cn1 holds the claim of the first test (2 VCPU): lost, it goes to cn2, which then holds 4 more.
    expect(r.body).toMatchObject({
      without_each: 'host',
      losses: [
        {level: 'host', name: 'cn1', hosts: 1, displaced: 1, unplaced: 0, survives: true, fit: {small: 4}},
        {level: 'host', name: 'cn2', hosts: 1, displaced: 0, unplaced: 0, survives: true, fit: {small: 4}},
      ],
      worst: {small: 4},
      survives: true,
    })
    for (const bad of ['without_each=aisle', 'without_each=rack&level=cloud']) {
      const refused = await api.call('GET', `/placemat/v1/capacity?${bad}`)
      expect(refused.status, bad).toBe(400)
    }
  })

  it('answers a what-if (without, ratio) on a copy: the fit after beside the one before, and who moved where', async () => {
    const r = await api.call('GET', '/placemat/v1/capacity?without=host:cn1&flavor=small&level=cloud')
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    expect(r.body.domains).toEqual([
      {level: 'cloud', name: 'cloud', flavor: 'small', fit: 4, pooled: 4, fragmentation_loss: 0, disabled_fit: 0, binding: 'VCPU'},
    ])
    expect(r.body.what_if).toEqual({
      without: [{level: 'host', name: 'cn1'}],
      ratios: {},
      added: [],
      displaced: [{consumer: U(100), from: ['cn1'], to: ['cn2']}],
      survives: true,
      changes: [{level: 'cloud', name: 'cloud', flavor: 'small', before: 10, after: 4, change: -6}],
    })
    const ratio = await api.call('GET', '/placemat/v1/capacity?ratio=VCPU=2&flavor=small&level=cloud')
    expect(ratio.body.what_if.changes).toEqual([{level: 'cloud', name: 'cloud', flavor: 'small', before: 10, after: 22, change: 12}])
    // Nothing of it reached the cloud.
    expect((await api.call('GET', '/placemat/v1/capacity?flavor=small&level=cloud')).body.domains[0].fit).toBe(10)
    expect((await api.call('GET', '/placemat/v1/capacity?without=host:nope')).status).toBe(404)
    for (const bad of ['without=aisle:a', 'ratio=VCPU=0', 'ratio=VCPU'])
      expect((await api.call('GET', `/placemat/v1/capacity?${bad}`)).status, bad).toBe(400)
  })

  it('answers how many of a flavor mix fit per domain (mix), refusing what is not one', async () => {
    const r = await api.call('GET', '/placemat/v1/capacity?mix=small=2,big=1&level=cloud')
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    // Claims small, big, small, small, big, ... one after another: cn1 (4 VCPU free) takes a small;
    // the big (4 VCPU) goes to cn2 (6 free, 2 left); two smalls to cn1 (1 left); the next big fits
    // nowhere.
    expect(r.body.mix).toEqual([
      {flavor: 'small', weight: 2},
      {flavor: 'big', weight: 1},
    ])
    expect(r.body.domains).toEqual([{level: 'cloud', name: 'cloud', fit: 4, by_flavor: {small: 3, big: 1}}])
    for (const bad of ['mix=small=0', 'mix=nope=1', 'mix=small=1&without_each=host']) {
      const refused = await api.call('GET', `/placemat/v1/capacity?${bad}`)
      expect(refused.status, bad).toBe(400)
    }
  })

  it('refuses an unknown flavor or level (400), and has nothing to count without a catalog (404)', async () => {
    const flavor = await api.call('GET', '/placemat/v1/capacity?flavor=huge')
    expect(flavor.status).toBe(400)
    expect(flavor.body.errors[0].detail).toContain('No flavor named huge in the catalog; it has small, big.')
    expect((await api.call('GET', '/placemat/v1/capacity?level=aisle')).status).toBe(400)
    const none = await bare.call('GET', '/placemat/v1/capacity')
    expect(none.status).toBe(404)
    expect(none.body.errors[0].detail).toContain('start it with --flavors FILE')
  })

  it('shows the flavor gauges at every scrape, from the State as it is', async () => {
    const text = (await api.app.inject({method: 'GET', url: '/metrics', headers: {'x-auth-token': 'admin'}})).body
    expect(text).toContain('placemat_flavor_fit{flavor="small",level="cloud",domain="cloud"} 10')
    expect(text).toContain('placemat_fragmentation_loss{flavor="big",level="cloud",domain="cloud"}')
    expect(text).toMatch(/# TYPE placemat_stranded gauge/)
    const plain = (await bare.app.inject({method: 'GET', url: '/metrics', headers: {'x-auth-token': 'admin'}})).body
    expect(plain).not.toMatch(/^placemat_flavor_fit\{/m)
  })

  it('keeps the catalog in force when a reload reads a broken file', () => {
    fs.writeFileSync(catalog.file, '- {name: small, vcpus: 1\n')
    expect(() => catalog.load()).toThrow(catalog.file)
    expect(catalog.flavors.map((f) => f.flavor)).toEqual(['small', 'big'])
  })
})
