/**
 * The map page through inject(): its files are served without a token, with a Content-Security-
 * Policy that allows no inline script or style and nothing from elsewhere, revalidated by their
 * ETag, and nothing but its own files is ever served from /placemat/ui/; every number it draws
 * (/placemat/v1/map/...) needs the token as any API call, and is answered 304 while nothing
 * changed; under a base path both are where the API is.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {FlavorCatalog} from '../../src/http/flavor-catalog.js'
import {UI_CSP} from '../../src/http/routes/ui.js'
import {testApi, type TestApi} from '../helpers/http-helpers.js'

const U = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`

describe('the map page', () => {
  let dir: string
  let api: TestApi
  let prefixed: TestApi
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-map-page-'))
    const file = path.join(dir, 'flavors.yaml')
    fs.writeFileSync(file, '- {name: small, vcpus: 1, ram: 1024}\n- {name: big, vcpus: 4, ram: 4096}\n')
    const catalog = new FlavorCatalog(file)
    catalog.load()
    api = await testApi({flavors: catalog})
    prefixed = await testApi({flavors: catalog, edge: {basePath: '/placement'}})
    for (const a of [api, prefixed])
      for (const i of [1, 2]) {
        expect((await a.call('POST', '/resource_providers', {name: `cn${i}`, uuid: U(i)})).status).toBe(200)
        const inventories = {VCPU: {total: 8}, MEMORY_MB: {total: 8192}}
        expect(
          (await a.call('PUT', `/resource_providers/${U(i)}/inventories`, {resource_provider_generation: 0, inventories})).status,
        ).toBe(200)
      }
    expect((await api.call('PUT', '/placemat/v1/topology/layout', {racks: [{name: 'r1', hosts: ['cn1']}]})).status).toBe(200)
  })
  afterAll(async () => {
    await api.close()
    await prefixed.close()
    fs.rmSync(dir, {recursive: true, force: true})
  })

  /** A request with no token at all, as a browser asks for a page's files. */
  const bare = (url: string, headers: Record<string, string> = {}) => api.app.inject({method: 'GET', url, headers})

  it('serves its files without a token, under a policy that allows only its own scripts, styles and API calls', async () => {
    const page = await bare('/placemat/ui/', {accept: 'text/html,application/xhtml+xml,*/*;q=0.8'})
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(page.headers['content-security-policy']).toBe(UI_CSP)
    expect(UI_CSP).toContain("default-src 'self'")
    expect(UI_CSP).not.toContain('unsafe-inline')
    expect(page.headers['x-content-type-options']).toBe('nosniff')
    expect(page.headers['referrer-policy']).toBe('no-referrer')
    // No inline script or style: every script has a src, no style element or attribute, no handler attribute.
    expect(page.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/)
    expect(page.body).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i)
    // Its files are named relative to it: nothing names the network.
    expect(page.body).not.toMatch(/(src|href)="(https?:)?\/\//)
    const css = await bare('/placemat/ui/map.css')
    expect([css.statusCode, css.headers['content-type']]).toEqual([200, 'text/css; charset=utf-8'])
    expect(css.body).not.toMatch(/@import|url\(/)
    // Revalidated by its ETag.
    const again = await bare('/placemat/ui/', {'if-none-match': String(page.headers.etag)})
    expect([again.statusCode, again.body]).toEqual([304, ''])
    // The folder without its slash is sent to the folder, the view kept.
    const folder = await bare('/placemat/ui?flavor=small')
    expect([folder.statusCode, folder.headers.location]).toEqual([301, 'ui/?flavor=small'])
  })

  it('serves nothing but its own files', async () => {
    for (const url of [
      '/placemat/ui/nope.js',
      '/placemat/ui/..%2f..%2fpackage.json',
      '/placemat/ui/%2e%2e',
      '/placemat/ui/index.html.map',
      '/placemat/ui/main.js.map',
      '/placemat/ui/MAP.CSS',
    ]) {
      const r = await bare(url)
      // Refused in Placement's error format: not a file (a path no route serves asks for a token first).
      expect([401, 404], url).toContain(r.statusCode)
      expect(JSON.parse(r.body).errors[0].status, url).toBe(r.statusCode)
    }
    expect((await bare('/placemat/ui/../v1/map/layout')).statusCode).toBe(401)
  })

  it('answers no number without the token', async () => {
    for (const url of [
      '/placemat/v1/map/layout',
      '/placemat/v1/map/values?flavor=small',
      '/placemat/v1/map/domain?level=cloud&name=cloud',
    ]) {
      const r = await bare(url)
      expect(r.statusCode, url).toBe(401)
      expect(r.body, url).not.toMatch(/cn1|"fit"/)
    }
  })

  it('answers the layout, a view and a domain, 304 while nothing changed', async () => {
    const layout = await api.call('GET', '/placemat/v1/map/layout')
    expect(layout.status).toBe(200)
    expect(layout.body).toMatchObject({
      hosts: ['cn1', 'cn2'],
      tree: [{level: 'rack', name: 'r1', hosts: [0]}],
      unracked: [1],
      flavors: ['small', 'big'],
      classes: ['MEMORY_MB', 'VCPU'],
    })
    const values = await api.call('GET', '/placemat/v1/map/values?flavor=small&class=VCPU')
    expect(values.status).toBe(200)
    expect(values.body.now.levels.host).toEqual({
      names: ['cn1', 'cn2'],
      fit: [8, 8],
      pooled: [8, 8],
      fragmentation_loss: [0, 0],
      disabled_fit: [0, 0],
      binding: [0, 0],
      capacity: [8, 8],
      used: [0, 0],
    })
    expect(values.body.now.levels.cloud.fit).toEqual([16])
    const tag = String(values.headers.etag)
    expect((await api.call('GET', '/placemat/v1/map/values?flavor=small&class=VCPU', undefined, {'if-none-match': tag})).status).toBe(304)
    // Another view has another tag; a write changes every tag.
    expect((await api.call('GET', '/placemat/v1/map/values?flavor=big', undefined, {'if-none-match': tag})).status).toBe(200)
    const claim = {
      allocations: {[U(1)]: {resources: {VCPU: 2, MEMORY_MB: 1024}}},
      project_id: 'p',
      user_id: 'u',
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    }
    expect((await api.call('PUT', `/allocations/${U(9)}`, claim)).status).toBe(204)
    // The layout's tag moves with its shape, not with a claim.
    const layoutTag = String(layout.headers.etag)
    expect((await api.call('GET', '/placemat/v1/map/layout', undefined, {'if-none-match': layoutTag})).status).toBe(304)
    const after = await api.call('GET', '/placemat/v1/map/values?flavor=small&class=VCPU', undefined, {'if-none-match': tag})
    expect(after.status).toBe(200)
    expect(after.body.now.levels.host.fit).toEqual([6, 8])
    expect(after.body.now.levels.host.used).toEqual([2, 0])
    const whatIf = await api.call('GET', '/placemat/v1/map/values?flavor=small&without=rack:r1')
    expect(whatIf.body.what_if).toMatchObject({without: [{level: 'rack', name: 'r1'}], survives: true})
    expect(whatIf.body.what_if.displaced).toEqual([{consumer: U(9), from: ['cn1'], to: ['cn2']}])
    expect(whatIf.body.after.levels.host).toMatchObject({names: ['cn2'], fit: [6]})
    const domain = await api.call('GET', '/placemat/v1/map/domain?level=rack&name=r1')
    expect(domain.body).toMatchObject({level: 'rack', name: 'r1', hosts: ['cn1'], consumer_count: 1, usage: {VCPU: {capacity: 8, used: 2}}})
  })

  it('refuses what it cannot answer', async () => {
    const refused = async (url: string) => {
      const r = await api.call('GET', url)
      // Placement's wording around it: the detail is its last part.
      return [r.status, String(r.body.errors[0].detail).split('\n\n').pop()!.trim()]
    }
    expect(await refused('/placemat/v1/map/values?flavor=huge')).toEqual([400, 'No flavor named huge in the catalog; it has small, big.'])
    expect(await refused('/placemat/v1/map/values?class=NOPE')).toEqual([400, 'No resource class named NOPE.'])
    expect(await refused('/placemat/v1/map/values?without=shelf:x')).toEqual([
      400,
      'Invalid without shelf:x: host:NAME, rack:NAME, row:NAME or room:NAME.',
    ])
    expect(await refused('/placemat/v1/map/values?without=rack:nope')).toEqual([404, 'No rack named nope with hosts'])
    expect(await refused('/placemat/v1/map/domain?level=shelf&name=x')).toEqual([
      400,
      'Invalid level shelf: one of host, rack, row, room, cloud.',
    ])
    expect(await refused('/placemat/v1/map/domain?level=rack')).toEqual([400, 'Give level (host, rack, row, room or cloud) and name.'])
  })

  it('is where the API is under a base path', async () => {
    const page = await prefixed.app.inject({method: 'GET', url: '/placement/placemat/ui/'})
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-security-policy']).toBe(UI_CSP)
    const layout = await prefixed.call('GET', '/placement/placemat/v1/map/layout')
    expect(layout.body.hosts).toEqual(['cn1', 'cn2'])
    // The page's relative ../v1/ from /placement/placemat/ui/ is this very path.
    expect(new URL('../v1/map/layout', 'https://cloud.example/placement/placemat/ui/').pathname).toBe('/placement/placemat/v1/map/layout')
  })

  it("leaves Placement's root document as it was", async () => {
    const root = await api.call('GET', '/')
    expect(Object.keys(root.body)).toEqual(['versions'])
    expect(root.body.versions[0].links).toEqual([{rel: 'self', href: ''}])
  })
})
