/**
 * The host services against a fake backend and a fake Placement (no process, no HTTP): a host
 * named by name is asked for by uuid, a provider inside a tree is refused naming its host, and
 * a host's lines have the same keys whatever its state.
 */
import {describe, expect, it} from 'vitest'
import {PlacementClient} from '../../client/client.js'
import type {HostRecord} from '../../core/host-status.js'
import {exitCodeOf} from '../failure.js'
import {hostLines, setHostStatus, showHost} from './hosts.js'
import {fakeBackend} from '../../../test/helpers/fake-backend.js'

const CN1 = '00000000-0000-4000-8000-000000000001'
const NUMA = '00000000-0000-4000-8000-000000000002'

/** cn1 and its child cn1-numa0, found by name. */
const placement = new PlacementClient({
  description: 'fake',
  async send(_method, path) {
    const found = path.includes('name=cn1-numa0')
      ? [{uuid: NUMA, name: 'cn1-numa0', root_provider_uuid: CN1, parent_provider_uuid: CN1, generation: 1}]
      : path.includes('name=cn1')
        ? [{uuid: CN1, name: 'cn1', root_provider_uuid: CN1, generation: 3}]
        : []
    if (path.startsWith('/resource_providers?')) return {status: 200, body: {resource_providers: found}, headers: {}}
    if (path === `/resource_providers/${CN1}`) return {status: 200, body: {uuid: CN1, name: 'cn1', generation: 3}, headers: {}}
    return {status: 404, body: {errors: [{detail: `nothing at ${path}`}]}, headers: {}}
  },
  close: async () => undefined,
})

const record = (over: Partial<HostRecord> = {}): HostRecord => ({
  uuid: CN1,
  name: 'cn1',
  generation: 3,
  disabled: false,
  disabled_reason: null,
  rack: 'r1',
  row: null,
  room: null,
  consumers: [],
  capacity: {VCPU: 8},
  used: {VCPU: 2},
  ...over,
})

function fake() {
  const asked: unknown[][] = []
  const backend = fakeBackend({
    kind: 'placemat',
    client: placement,
    async host(uuid: string) {
      asked.push(['host', uuid])
      return record()
    },
    async setHostStatus(uuid: string, disabled: boolean, reason?: string) {
      asked.push(['status', uuid, disabled, reason])
      return {host: record({disabled, disabled_reason: reason ?? null}), changed: true, reasonDropped: false}
    },
  })
  return {backend, asked}
}

describe('hosts', () => {
  it('asks the backend for the host an operator named by name, by its uuid', async () => {
    const f = fake()
    expect((await showHost(f.backend, 'cn1')).name).toBe('cn1')
    const out = await setHostStatus(f.backend, 'cn1', true, 'PSU failure')
    expect(out.host.disabled_reason).toBe('PSU failure')
    expect(f.asked).toEqual([
      ['host', CN1],
      ['status', CN1, true, 'PSU failure'],
    ])
  })

  it('refuses a provider inside a host, naming the host (exit 6), and asks the backend nothing', async () => {
    const f = fake()
    const err = await showHost(f.backend, 'cn1-numa0').catch((e) => e)
    expect([exitCodeOf(err), err.message]).toEqual([
      6,
      'cn1-numa0 is not a host: it is a provider in the tree of cn1 (name the root provider)',
    ])
    expect(f.asked).toEqual([])
  })

  it('says a host in the same lines whether or not it is in service or in a rack', () => {
    const enabled = hostLines(record())
    const disabled = hostLines(record({disabled: true, disabled_reason: 'PSU', rack: null}))
    expect(Object.keys(disabled)).toEqual(Object.keys(enabled))
    expect(enabled).toMatchObject({status: 'enabled', reason: '', rack: 'r1', consumers: 0, VCPU: '2/8'})
    expect(disabled).toMatchObject({status: 'disabled', reason: 'PSU', rack: ''})
  })
})
