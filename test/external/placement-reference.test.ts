/**
 * Answers compared with the real OpenStack Placement (Debian's placement-api; skipped, saying
 * so, where it is not installed), for what a client meets that depends on the order of its
 * own request: the same requests to both, the same answers.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {Policy} from '../../src/http/policy/policy.js'
import {placementAvailable, startPlacement, type ReferencePlacement} from '../helpers/placement.js'
import {testApi, type TestApi} from '../helpers/http-helpers.js'

if (!placementAvailable)
  console.warn('placement-reference.test.ts: no placement-api here (apt-get install placement-api uwsgi-plugin-python3): skipped')

const CN = 'c0000000-0000-4000-8000-000000000001'
const NUMA1 = 'c0000000-0000-4000-8000-000000000002'
const NUMA2 = 'c0000000-0000-4000-8000-000000000003'
const INST1 = 'a0000000-0000-4000-8000-000000000001'
const INST2 = 'a0000000-0000-4000-8000-000000000002'
const PROJECT = 'b0000000-0000-4000-8000-000000000001'

type Call = (method: string, path: string, body?: unknown) => Promise<{status: number; body: any}>

/**
 * nova's test_update_from_provider_tree_reshape, in small: a compute node with two NUMA
 * children, both holding allocations, and a reshape that empties the children without
 * moving those allocations (nova lists the providers to remove from a Python set, so their
 * order in the body changes from run to run).
 */
async function reshapeWithoutMoving(call: Call, order: string[]): Promise<{status: number; body: any}> {
  const created = async (uuid: string, name: string, parent?: string) => {
    const r = await call('POST', '/resource_providers', {uuid, name, ...(parent ? {parent_provider_uuid: parent} : {})})
    expect(r.status, JSON.stringify(r.body)).toBe(200)
  }
  for (const rc of ['CUSTOM_PCPU', 'CUSTOM_FOO']) expect((await call('PUT', `/resource_classes/${rc}`)).status).toBeLessThan(300)
  await created(CN, 'cn')
  await created(NUMA1, 'numa1', CN)
  await created(NUMA2, 'numa2', CN)
  const inventory = async (uuid: string, classes: string[]) => {
    const r = await call('PUT', `/resource_providers/${uuid}/inventories`, {
      resource_provider_generation: 0,
      inventories: Object.fromEntries(classes.map((c) => [c, {total: 1024}])),
    })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
  }
  await inventory(CN, ['MEMORY_MB', 'SRIOV_NET_VF', 'CUSTOM_FOO'])
  await inventory(NUMA1, ['VCPU', 'CUSTOM_PCPU', 'CUSTOM_FOO'])
  await inventory(NUMA2, ['CUSTOM_PCPU', 'SRIOV_NET_VF', 'CUSTOM_FOO'])
  const allocations = {
    [INST1]: {
      allocations: {[CN]: {resources: {MEMORY_MB: 512, SRIOV_NET_VF: 1}}, [NUMA1]: {resources: {VCPU: 2, CUSTOM_PCPU: 2, CUSTOM_FOO: 1}}},
      project_id: PROJECT,
      user_id: PROJECT,
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    },
    [INST2]: {
      allocations: {[CN]: {resources: {MEMORY_MB: 256}}, [NUMA2]: {resources: {CUSTOM_PCPU: 1, SRIOV_NET_VF: 1, CUSTOM_FOO: 1}}},
      project_id: PROJECT,
      user_id: PROJECT,
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    },
  }
  const posted = await call('POST', '/allocations', allocations)
  expect(posted.status, JSON.stringify(posted.body)).toBe(204)
  const generation = async (uuid: string) => (await call('GET', `/resource_providers/${uuid}`)).body.generation
  const inventories: Record<string, unknown> = {
    [CN]: {
      resource_provider_generation: await generation(CN),
      inventories: Object.fromEntries(['MEMORY_MB', 'SRIOV_NET_VF', 'CUSTOM_FOO', 'VCPU', 'CUSTOM_PCPU'].map((c) => [c, {total: 4096}])),
    },
  }
  for (const uuid of order) inventories[uuid] = {resource_provider_generation: await generation(uuid), inventories: {}}
  const held = async (c: string) => ({
    ...allocations[c],
    consumer_generation: (await call('GET', `/allocations/${c}`)).body.consumer_generation,
  })
  return call('POST', '/reshaper', {inventories, allocations: {[INST1]: await held(INST1), [INST2]: await held(INST2)}})
}

const errorOf = (r: {status: number; body: any}) => ({
  status: r.status,
  code: r.body?.errors?.[0]?.code,
  detail: r.body?.errors?.[0]?.detail,
})

describe.skipIf(!placementAvailable)('answers as OpenStack Placement gives them', () => {
  let placement: ReferencePlacement
  beforeAll(async () => {
    placement = await startPlacement()
  }, 120_000)
  afterAll(async () => {
    await placement?.stop()
  })

  it('a reshape refused for inventory in use names the first provider of the body that has some, and its classes in class order', async () => {
    for (const order of [
      [NUMA1, NUMA2],
      [NUMA2, NUMA1],
    ]) {
      let api: TestApi | undefined
      try {
        // The reference is Debian's Placement 8.0.0 (its noauth2 admin reshapes by the deprecated
        // default): placemat runs with that release's policy defaults too.
        api = await testApi({policy: Policy.load({defaults: '8.0.0'})})
        const ours = errorOf(await reshapeWithoutMoving((m, p, b) => api!.call(m, p, b), order))
        // A fresh Placement database for each order: the providers are made again.
        await placement.stop()
        placement = await startPlacement()
        const theirs = errorOf(await reshapeWithoutMoving((m, p, b) => placement.call(m, p, b), order))
        expect(ours).toEqual(theirs)
        expect(ours.code).toBe('placement.inventory.inuse')
        expect(ours.detail).toContain(
          order[0] === NUMA1
            ? `'VCPU, CUSTOM_PCPU, CUSTOM_FOO' on resource provider '${NUMA1}'`
            : `'SRIOV_NET_VF, CUSTOM_PCPU, CUSTOM_FOO' on resource provider '${NUMA2}'`,
        )
      } finally {
        await api?.close()
      }
    }
  }, 240_000)
})
