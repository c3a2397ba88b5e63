/**
 * Provider trees against a fake Placement (no process, no HTTP): children nested under their
 * parents and sorted by name, only the tree asked for read, and each tree drawn one row per
 * provider and class, the first row of a provider carrying its name.
 */
import {describe, expect, it} from 'vitest'
import {fakePlacement} from '../../../test/helpers/fake-backend.js'
import {inv} from '../../../test/helpers/records.js'
import {loadTrees, treeRows} from './tree.js'

const CN1 = '00000000-0000-4000-8000-000000000001'
const NUMA0 = '00000000-0000-4000-8000-000000000002'
const NUMA1 = '00000000-0000-4000-8000-000000000003'
const CN2 = '00000000-0000-4000-8000-000000000004'

/** cn1 holding numa1 and numa0 (listed in that order, numa0 with VCPU) and cn2; `paths` are the calls made. */
function placement() {
  const providers = [
    {uuid: CN1, name: 'cn1', generation: 3, root_provider_uuid: CN1, parent_provider_uuid: null},
    {uuid: NUMA1, name: 'cn1-numa1', generation: 1, root_provider_uuid: CN1, parent_provider_uuid: CN1},
    {uuid: NUMA0, name: 'cn1-numa0', generation: 1, root_provider_uuid: CN1, parent_provider_uuid: CN1},
    {uuid: CN2, name: 'cn2', generation: 1, root_provider_uuid: CN2, parent_provider_uuid: null},
  ]
  return fakePlacement(({path}) => {
    if (path === '/resource_providers?name=cn1') return {body: {resource_providers: [providers[0]]}}
    if (path === `/resource_providers?in_tree=${CN1}`) return {body: {resource_providers: providers.slice(0, 3)}}
    if (path === '/resource_providers') return {body: {resource_providers: providers}}
    if (path === `/resource_providers/${NUMA0}/inventories`) return {body: {inventories: {VCPU: inv(4, {allocation_ratio: 2})}}}
    if (path === `/resource_providers/${NUMA0}/usages`) return {body: {usages: {VCPU: 3}}}
    if (path.endsWith('/inventories')) return {body: {inventories: {}}}
    if (path.endsWith('/usages')) return {body: {usages: {}}}
    return undefined
  })
}

describe('provider trees', () => {
  it('nests children under their parents, sorted by name, and reads only the tree asked for', async () => {
    const {client, calls} = placement()
    const all = await loadTrees(client)
    expect(all.map((r) => [r.name, r.children.map((c) => c.name)])).toEqual([
      ['cn1', ['cn1-numa0', 'cn1-numa1']],
      ['cn2', []],
    ])
    const one = await loadTrees(placement().client, 'cn1')
    expect(one.map((r) => r.name)).toEqual(['cn1'])
    expect(calls.some((c) => c.path.endsWith('/traits') || c.path.endsWith('/aggregates'))).toBe(false)
  })

  it('draws each provider once, its classes on the rows after, with used, capacity and free', async () => {
    const rows = treeRows(await loadTrees(placement().client, 'cn1'))
    expect(rows.map((r) => [r.tree, r.resource_class, r.used, r.capacity, r.free])).toEqual([
      ['cn1', '', '', '', ''],
      ['├─ cn1-numa0', 'VCPU', 3, 8, 5],
      ['└─ cn1-numa1', '', '', '', ''],
    ])
    expect(rows[1].uuid).toBe(NUMA0)
  })
})
