/**
 * An export over the API while the cloud is written: the passes are made again while writes
 * come in, and when none was quiet the export fails (exit 4) saying what to do, rather than
 * returning a snapshot that mixes states.
 */
import {afterEach, describe, expect, it} from 'vitest'
import {PlacementClient, type ApiResponse, type Transport} from '../../src/client/client.js'
import {exitCodeOf} from '../../src/cli/failure.js'
import {exportSnapshot} from '../../src/cli/services/state-export.js'
import {PlacematBackend} from '../../src/cli/backend/placemat.js'
import {PlainBackend} from '../../src/cli/backend/plain.js'
import {testApi, type TestApi} from '../helpers/http-helpers.js'

let api: TestApi
afterEach(() => api.close())

/** The app through inject(), with `during` run before every read of allocations (a writer racing the export): a provider's, or placemat's list of consumers. */
function racingTransport(api: TestApi, during: () => Promise<void>): Transport {
  return {
    description: 'inject',
    async send(method, path, headers, body): Promise<ApiResponse> {
      if (method === 'GET' && /\/resource_providers\/[^/]+\/allocations$|\/placemat\/v1\/consumers$/.test(path)) await during()
      const res = await api.app.inject({method: method as any, url: path, headers: {'x-auth-token': 'admin', ...headers}, payload: body})
      return {status: res.statusCode, body: res.body ? JSON.parse(res.body) : undefined, headers: res.headers as Record<string, string>}
    },
    async close() {},
  }
}

describe('export over the API under writes', () => {
  it('fails with exit 4 when no pass was quiet, and succeeds once the writes stop', async () => {
    api = await testApi()
    const rp = (await api.call('POST', '/resource_providers', {name: 'cn1'})).body
    await api.call('PUT', `/resource_providers/${rp.uuid}/inventories`, {resource_provider_generation: 0, inventories: {VCPU: {total: 8}}})
    let writing = true
    let n = 0
    const write = async () => {
      if (!writing) return
      const gen = (await api.call('GET', `/resource_providers/${rp.uuid}`)).body.generation
      await api.call('PUT', `/resource_providers/${rp.uuid}/traits`, {
        resource_provider_generation: gen,
        traits: n++ % 2 ? [] : ['CUSTOM_BUSY'],
      })
    }
    await api.call('PUT', '/traits/CUSTOM_BUSY')
    const client = new PlainBackend(new PlacementClient(racingTransport(api, write)))
    const err = await exportSnapshot(client).catch((e) => e)
    expect(exitCodeOf(err)).toBe(4)
    expect(err.message).toMatch(/the cloud changed while it was read: 1 provider\(s\) changed during the last of 5 passes/)
    expect(err.message).toContain('import --from-placement')
    writing = false
    const snap = await exportSnapshot(client)
    expect(snap.providers.map((p) => p.name)).toEqual(['cn1'])
  })

  it('on placemat, a placement group that changes during every pass fails the export too', async () => {
    api = await testApi()
    const rp = (await api.call('POST', '/resource_providers', {name: 'cn1'})).body
    await api.call('PUT', `/resource_providers/${rp.uuid}/inventories`, {resource_provider_generation: 0, inventories: {VCPU: {total: 8}}})
    await api.call('POST', '/placemat/v1/groups', {name: 'g', policy: 'anti-affinity', level: 'host'})
    let writing = true
    let n = 0
    // Membership changes move only the group's generation: no provider changes.
    const write = async () => {
      if (writing)
        await api.call(
          'POST',
          '/placemat/v1/groups/g/members',
          n++ % 2 ? {remove: ['a0000000-0000-4000-8000-000000000001']} : {add: ['a0000000-0000-4000-8000-000000000001']},
        )
    }
    const client = new PlacematBackend(new PlacementClient(racingTransport(api, write)))
    const err = await exportSnapshot(client).catch((e) => e)
    expect(exitCodeOf(err)).toBe(4)
    expect(err.message).toMatch(
      /0 provider\(s\) and the racks, rows, rooms, placement groups, moved consumers or aggregate names changed during the last of 5 passes/,
    )
    writing = false
    const snap = await exportSnapshot(client)
    expect(snap.groups?.map((g) => g.name)).toEqual(['g'])
  })

  it("on placemat, reads providers and consumers in two calls, and writes what the public API's reads write", async () => {
    api = await testApi()
    const U = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
    await api.call('PUT', '/resource_classes/CUSTOM_FPGA')
    await api.call('PUT', '/traits/CUSTOM_GOLD')
    await api.call('POST', '/resource_providers', {name: 'cn1', uuid: U(1)})
    await api.call('POST', '/resource_providers', {name: 'numa0', uuid: U(2), parent_provider_uuid: U(1)})
    await api.call('PUT', `/resource_providers/${U(1)}/inventories`, {
      resource_provider_generation: 0,
      inventories: {DISK_GB: {total: 100, reserved: 5}, CUSTOM_FPGA: {total: 2}, VCPU: {total: 8, allocation_ratio: 4}},
    })
    await api.call('PUT', `/resource_providers/${U(2)}/inventories`, {
      resource_provider_generation: 0,
      inventories: {MEMORY_MB: {total: 4096}},
    })
    await api.call('PUT', `/resource_providers/${U(1)}/traits`, {
      resource_provider_generation: 1,
      traits: ['CUSTOM_GOLD', 'HW_CPU_X86_AVX2'],
    })
    await api.call('PUT', `/resource_providers/${U(1)}/aggregates`, {resource_provider_generation: 2, aggregates: [U(90)]})
    for (const [n, type] of [
      [10, 'INSTANCE'],
      [11, 'MIGRATION'],
    ] as const)
      await api.call('PUT', `/allocations/${U(n)}`, {
        allocations: {[U(1)]: {resources: {VCPU: 2, CUSTOM_FPGA: 1}}, [U(2)]: {resources: {MEMORY_MB: 512}}},
        project_id: 'p',
        user_id: 'u',
        consumer_generation: null,
        consumer_type: type,
      })
    const reads: string[] = []
    const counted = racingTransport(api, async () => {})
    const transport: Transport = {
      ...counted,
      send: (method, path, headers, body) => {
        reads.push(path)
        return counted.send(method, path, headers, body)
      },
    }
    const own = await exportSnapshot(new PlacematBackend(new PlacementClient(transport)), {progress: () => reads.push('progress')})
    expect(reads.filter((r) => /\/resource_providers\/|\/allocations\/|progress/.test(r))).toEqual([])
    // A read one by one says how far it is; placemat's own, two calls, has nothing to say.
    const steps: string[] = []
    const plain = await exportSnapshot(new PlainBackend(new PlacementClient(racingTransport(api, async () => {}))), {
      progress: (done, total, what) => steps.push(`${what} ${done}/${total}`),
    })
    expect(steps).toEqual(['providers 0/2', 'providers 1/2', 'consumers 0/2', 'consumers 1/2'])
    expect({providers: own.providers, consumers: own.consumers, resource_classes: own.resource_classes, traits: own.traits}).toEqual({
      providers: plain.providers,
      consumers: plain.consumers,
      resource_classes: plain.resource_classes,
      traits: plain.traits,
    })
    expect(own.consumers?.map((c) => c.consumer_type)).toEqual(['INSTANCE', 'MIGRATION'])
  })
})
