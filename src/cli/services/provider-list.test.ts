/**
 * listProviderRows against a fake backend and a fake Placement (no process, no HTTP): the filters
 * sent as GET /resource_providers takes them, racks, rows and rooms by name as their aggregates
 * (a name the layout does not have refused before the list is asked for), and each provider's
 * host out of service or not.
 */
import {describe, expect, it} from 'vitest'
import {nodeUuid} from '../../core/topology.js'
import {fakeBackend, fakePlacement} from '../../../test/helpers/fake-backend.js'
import type {Endpoint} from '../backend/backend.js'
import {exitCodeOf} from '../failure.js'
import {listProviderRows} from './provider-list.js'

const CN1 = '00000000-0000-4000-8000-000000000001'
const NUMA = '00000000-0000-4000-8000-000000000002'
const CN2 = '00000000-0000-4000-8000-000000000003'

/** cn1 (out of service) with its child, and cn2; the layout has rack r1. */
function endpoint(): {endpoint: Endpoint; paths: () => string[]} {
  const {client, calls} = fakePlacement(({path}) => {
    if (path.startsWith('/resource_providers?required=COMPUTE_STATUS_DISABLED')) return {body: {resource_providers: [{uuid: CN1}]}}
    if (path.startsWith('/resource_providers'))
      return {
        body: {
          resource_providers: [
            {uuid: CN1, name: 'cn1', generation: 1, root_provider_uuid: CN1},
            {uuid: NUMA, name: 'cn1-numa0', generation: 1, root_provider_uuid: CN1, parent_provider_uuid: CN1},
            {uuid: CN2, name: 'cn2', generation: 1, root_provider_uuid: CN2},
          ],
        },
      }
    return undefined
  })
  const backend = fakeBackend({client, currentLayout: async () => ({racks: [{name: 'r1', hosts: ['cn1']}]})})
  return {endpoint: {client, backend: async () => backend}, paths: () => calls.map((c) => decodeURIComponent(c.path))}
}

describe('provider list', () => {
  it('sends the filters as Placement takes them, a rack by name as its aggregate', async () => {
    const e = endpoint()
    await listProviderRows(
      e.endpoint,
      {name: 'cn1', memberOf: ['in:rack:r1,agg-x'], required: ['HW_CPU_X86_AVX2'], inTree: CN1},
      {disabled: false},
    )
    expect(e.paths()).toEqual([
      `/resource_providers?name=cn1&member_of=in:${nodeUuid('rack', 'r1')},agg-x&required=HW_CPU_X86_AVX2&in_tree=${CN1}`,
    ])
  })

  it('refuses a rack the layout does not have (exit 3), asking Placement nothing', async () => {
    const e = endpoint()
    const err = await listProviderRows(e.endpoint, {memberOf: ['rack:r9']}, {disabled: false}).catch((x) => x)
    expect([exitCodeOf(err), err.message]).toEqual([3, 'no rack named r9'])
    expect(e.paths()).toEqual([])
  })

  it("marks each provider whose host is out of service, a child by its root's trait", async () => {
    const e = endpoint()
    const body = await listProviderRows(e.endpoint, {}, {disabled: true})
    expect(body.resource_providers.map((p) => [p.name, p.disabled])).toEqual([
      ['cn1', true],
      ['cn1-numa0', true],
      ['cn2', false],
    ])
  })
})
