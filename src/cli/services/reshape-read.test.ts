/**
 * What a reshape reads, against a fake Placement (no process, no HTTP): the providers a move plan
 * names (a new target's parent only when the target is not there yet, each name asked once), and
 * a snapshot of the trees involved, the consumers wanted read in full and the providers they use
 * outside those trees read too.
 */
import {describe, expect, it} from 'vitest'
import {fakePlacement} from '../../../test/helpers/fake-backend.js'
import {inv} from '../../../test/helpers/records.js'
import {providersNamedByMoves, readReshapeSnapshot} from './reshape-read.js'

const CN1 = '00000000-0000-4000-8000-000000000001'
const GPU = '00000000-0000-4000-8000-000000000002'
const CN2 = '00000000-0000-4000-8000-000000000003'
const VM = 'cccccccc-0000-4000-8000-000000000001'

/** cn1 with its child gpu0; VM holds VCPU on cn1 and DISK_GB on cn2 (another tree). */
function placement() {
  const listed = {
    cn1: {uuid: CN1, name: 'cn1', generation: 2, root_provider_uuid: CN1},
    gpu0: {uuid: GPU, name: 'cn1-gpu0', generation: 1, root_provider_uuid: CN1, parent_provider_uuid: CN1},
    cn2: {uuid: CN2, name: 'cn2', generation: 1, root_provider_uuid: CN2},
  }
  return fakePlacement(({path}) => {
    if (path.startsWith('/resource_providers?name=')) {
      const name = decodeURIComponent(path.split('=')[1])
      const found = Object.values(listed).filter((p) => p.name === name)
      return {body: {resource_providers: found}}
    }
    if (path === '/resource_classes') return {body: {resource_classes: [{name: 'VCPU'}, {name: 'VGPU'}, {name: 'DISK_GB'}]}}
    if (path === `/resource_providers?in_tree=${CN1}`) return {body: {resource_providers: [listed.cn1, listed.gpu0]}}
    if (path === `/resource_providers/${CN2}`) return {body: listed.cn2}
    if (path === `/resource_providers/${CN1}/inventories`) return {body: {inventories: {VCPU: inv(8), VGPU: inv(2)}}}
    if (path === `/resource_providers/${CN2}/inventories`) return {body: {inventories: {DISK_GB: inv(100)}}}
    if (path.endsWith('/inventories')) return {body: {inventories: {}}}
    if (path === `/resource_providers/${CN1}/allocations`)
      return {body: {allocations: {[VM]: {resources: {VCPU: 2}, consumer_generation: 4}}}}
    if (path.endsWith('/allocations') && path.startsWith('/resource_providers/')) return {body: {allocations: {}}}
    if (path === `/allocations/${VM}`)
      return {
        body: {
          allocations: {[CN1]: {resources: {VCPU: 2}}, [CN2]: {resources: {DISK_GB: 10}}},
          project_id: 'p',
          user_id: 'u',
          consumer_generation: 4,
        },
      }
    return undefined
  })
}

describe('what a reshape reads', () => {
  it("names the providers of a move plan that exist, a new target's parent only when the target is not there, each asked once", async () => {
    const {client, calls} = placement()
    const found = await providersNamedByMoves(client, [
      {from: 'cn1', to: 'cn1-gpu0', parent: 'cn2', resources: {VGPU: 'all'}},
      {from: 'cn1', to: 'cn1-gpu1', parent: 'cn1', resources: {VGPU: 1}},
    ])
    expect(found.map((p) => p.name)).toEqual(['cn1', 'cn1-gpu0'])
    expect(calls.map((c) => decodeURIComponent(c.path))).toEqual([
      '/resource_providers?name=cn1',
      '/resource_providers?name=cn1-gpu0',
      '/resource_providers?name=cn1-gpu1',
    ])
  })

  it('reads the trees involved, the consumers wanted in full, and the providers they use outside those trees', async () => {
    const {client} = placement()
    const cn1 = {uuid: CN1, name: 'cn1', generation: 2, root_provider_uuid: CN1}
    let seen: string[] = []
    const snap = await readReshapeSnapshot(client, [cn1], (trees) => {
      seen = (trees.consumers ?? []).map((c) => c.uuid)
      return seen
    })
    expect(seen).toEqual([VM])
    expect(snap.providers.map((p) => [p.name, Object.keys(p.inventories ?? {})])).toEqual([
      ['cn1', ['VCPU', 'VGPU']],
      ['cn1-gpu0', []],
      ['cn2', ['DISK_GB']],
    ])
    expect(snap.consumers).toEqual([
      {
        uuid: VM,
        project_id: 'p',
        user_id: 'u',
        consumer_type: undefined,
        consumer_generation: 4,
        allocations: {[CN1]: {resources: {VCPU: 2}}, [CN2]: {resources: {DISK_GB: 10}}},
      },
    ])
  })
})
