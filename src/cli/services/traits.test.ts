/**
 * The trait services against a fake Placement (no process, no HTTP): the list filtered as GET
 * /traits filters it, a trait that is not there a 404, and traits made by PUT with whether each
 * was made.
 */
import {describe, expect, it} from 'vitest'
import {fakePlacement, refusal} from '../../../test/helpers/fake-backend.js'
import {exitCodeOf} from '../failure.js'
import {checkTrait, createTraits, deleteTraits, listTraits} from './traits.js'

describe('traits', () => {
  it('asks for the traits with the filters given, and none not given', async () => {
    const {client, calls} = fakePlacement(() => ({body: {traits: ['CUSTOM_A']}}))
    expect(await listTraits(client, {name: 'startswith:CUSTOM_', associated: true})).toEqual({traits: ['CUSTOM_A']})
    await listTraits(client)
    expect(calls.map((c) => decodeURIComponent(c.path))).toEqual(['/traits?name=startswith:CUSTOM_&associated=true', '/traits'])
  })

  it('says a trait that is not there as a 404 (exit 3)', async () => {
    const {client} = fakePlacement(({path}) =>
      path === '/traits/CUSTOM_A' ? {status: 204} : {status: 404, body: refusal('No such trait')},
    )
    await checkTrait(client, 'CUSTOM_A')
    const err = await checkTrait(client, 'CUSTOM_B').catch((e) => e)
    expect([exitCodeOf(err), err.detail]).toEqual([3, 'No such trait'])
  })

  it('creates each trait by PUT, saying which this call made, and deletes them in turn', async () => {
    const {client, calls} = fakePlacement(({method, path}) => ({status: method === 'PUT' && path.endsWith('_NEW') ? 201 : 204}))
    expect(await createTraits(client, ['CUSTOM_OLD', 'CUSTOM_NEW'])).toEqual([
      {name: 'CUSTOM_OLD', created: false},
      {name: 'CUSTOM_NEW', created: true},
    ])
    await deleteTraits(client, ['CUSTOM_OLD'])
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      'PUT /traits/CUSTOM_OLD',
      'PUT /traits/CUSTOM_NEW',
      'DELETE /traits/CUSTOM_OLD',
    ])
  })
})
