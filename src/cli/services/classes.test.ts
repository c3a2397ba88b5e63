/**
 * The resource class services against a fake Placement (no process, no HTTP): create by POST, or
 * by PUT with whether each was made; only the custom ones listed when asked; deletes in turn,
 * stopping at the first refused.
 */
import {describe, expect, it} from 'vitest'
import {ApiError} from '../../client/client.js'
import {fakePlacement, refusal} from '../../../test/helpers/fake-backend.js'
import {createClasses, deleteClasses, listClasses} from './classes.js'

describe('resource classes', () => {
  it('creates each class by POST, or with existOk by PUT, saying which this call made', async () => {
    const {client, calls} = fakePlacement(({method, path}) =>
      method === 'POST' ? {status: 201} : {status: path.endsWith('CUSTOM_OLD') ? 204 : 201},
    )
    expect(await createClasses(client, ['CUSTOM_A'], false)).toEqual([{name: 'CUSTOM_A', created: true}])
    expect(await createClasses(client, ['CUSTOM_OLD', 'CUSTOM_NEW'], true)).toEqual([
      {name: 'CUSTOM_OLD', created: false},
      {name: 'CUSTOM_NEW', created: true},
    ])
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      'POST /resource_classes',
      'PUT /resource_classes/CUSTOM_OLD',
      'PUT /resource_classes/CUSTOM_NEW',
    ])
    expect(calls[0].body).toEqual({name: 'CUSTOM_A'})
  })

  it('lists only the custom classes when asked', async () => {
    const {client} = fakePlacement(() => ({body: {resource_classes: [{name: 'VCPU'}, {name: 'CUSTOM_GPU'}]}}))
    expect((await listClasses(client)).resource_classes.map((c) => c.name)).toEqual(['VCPU', 'CUSTOM_GPU'])
    expect((await listClasses(client, {custom: true})).resource_classes.map((c) => c.name)).toEqual(['CUSTOM_GPU'])
  })

  it('deletes the classes in turn and stops at the first refused', async () => {
    const {client, calls} = fakePlacement(({path}) =>
      path.endsWith('CUSTOM_B') ? {status: 409, body: refusal('in use by an inventory')} : {status: 204},
    )
    const err = await deleteClasses(client, ['CUSTOM_A', 'CUSTOM_B', 'CUSTOM_C']).catch((e) => e)
    expect(err).toBeInstanceOf(ApiError)
    expect(calls.map((c) => c.path)).toEqual(['/resource_classes/CUSTOM_A', '/resource_classes/CUSTOM_B'])
  })
})
