/**
 * The allocation services against a fake Placement (no process, no HTTP): osc-placement's
 * --allocation strings, a consumer's PUT body with what it keeps, unset and amend, a
 * read-modify-write run again on a concurrent update, and a POST /allocations body completed.
 */
import {describe, expect, it} from 'vitest'
import {ErrorCode} from '../../core/errors.js'
import {fakePlacement, refusal} from '../../../test/helpers/fake-backend.js'
import {exitCodeOf} from '../failure.js'
import {amendAmounts, consumerBody, parseAllocationArgs, preparePost, unsetAmounts, updateConsumer} from './allocations.js'

const C = 'cccccccc-0000-4000-8000-000000000001'
const CN1 = '00000000-0000-4000-8000-000000000001'
const CN2 = '00000000-0000-4000-8000-000000000002'

describe('allocations', () => {
  it('reads --allocation strings into amounts per provider, one provider given twice merged', () => {
    const out = parseAllocationArgs(['rp=cn1,VCPU=2', 'rp=cn1,MEMORY_MB=1024', 'provider=cn2,DISK_GB=10'])
    expect(Object.fromEntries(out)).toEqual({cn1: {VCPU: 2, MEMORY_MB: 1024}, cn2: {DISK_GB: 10}})
  })

  it('refuses a class given twice with two amounts, an amount of 0 and a string without a provider (exit 2)', () => {
    const said = (args: string[], allowZero = false) => {
      try {
        parseAllocationArgs(args, allowZero)
        return 'taken'
      } catch (err) {
        return `${exitCodeOf(err)} ${(err as Error).message}`
      }
    }
    expect(said(['rp=cn1,VCPU=2', 'rp=cn1,VCPU=3'])).toBe('2 --allocation: VCPU on cn1 given twice with different amounts')
    expect(said(['rp=cn1,VCPU=0'])).toMatch(/^2 --allocation rp=cn1,VCPU=0: VCPU=0 \(amounts start at 1/)
    expect(said(['rp=cn1,VCPU=0'], true)).toBe('taken')
    expect(said(['VCPU=2'])).toBe('2 --allocation VCPU=2: name the provider with rp=UUID or rp=NAME')
  })

  it("keeps the consumer's project, user, type and generation in its PUT body where none is given", () => {
    const current = {allocations: {}, project_id: 'p', user_id: 'u', consumer_generation: 4, consumer_type: 'INSTANCE'}
    expect(consumerBody(C, current, {[CN1]: {VCPU: 1}}, {})).toEqual({
      body: {
        allocations: {[CN1]: {resources: {VCPU: 1}}},
        project_id: 'p',
        user_id: 'u',
        consumer_generation: 4,
        consumer_type: 'INSTANCE',
      },
    })
  })

  it('writes a consumer of no known type at 1.37, which leaves its type as it is', () => {
    const current = {allocations: {}, project_id: 'p', user_id: 'u', consumer_generation: 1, consumer_type: 'unknown'}
    const {body, version} = consumerBody(C, current, {}, {})
    expect([version, 'consumer_type' in body]).toEqual(['1.37', false])
  })

  it('refuses a new consumer without a project and a user (exit 2)', () => {
    const err = (() => {
      try {
        return consumerBody(C, {allocations: {}}, {[CN1]: {VCPU: 1}}, {user: 'u'})
      } catch (e) {
        return e
      }
    })()
    expect([exitCodeOf(err), (err as Error).message]).toEqual([2, `consumer ${C} has no allocations yet: give --project and --user`])
  })

  it('unset drops the classes named on the providers named (all providers when none), and a provider left with nothing', () => {
    const current = {[CN1]: {VCPU: 1, MEMORY_MB: 512}, [CN2]: {VCPU: 2}}
    expect(unsetAmounts(current, [CN2], ['VCPU'])).toEqual({[CN1]: {VCPU: 1, MEMORY_MB: 512}})
    expect(unsetAmounts(current, [], ['VCPU'])).toEqual({[CN1]: {MEMORY_MB: 512}})
    expect(unsetAmounts(current, [CN1], [])).toEqual({[CN2]: {VCPU: 2}})
    expect(current[CN1]).toEqual({VCPU: 1, MEMORY_MB: 512})
  })

  it('amend lays changes over what is held, 0 dropping a class', () => {
    expect(amendAmounts({[CN1]: {VCPU: 1, MEMORY_MB: 512}}, {[CN1]: {VCPU: 0, DISK_GB: 5}, [CN2]: {VCPU: 3}})).toEqual({
      [CN1]: {MEMORY_MB: 512, DISK_GB: 5},
      [CN2]: {VCPU: 3},
    })
  })

  it('reads the consumer again and writes again when its generation moved meanwhile', async () => {
    let generation = 1
    let puts = 0
    const {client, calls} = fakePlacement(({method, body}) => {
      if (method === 'GET') return {body: {allocations: {}, project_id: 'p', user_id: 'u', consumer_generation: generation}}
      puts++
      // The first write finds another writer was there first.
      if (puts === 1) {
        generation = 2
        return {status: 409, body: refusal('consumer generation conflict', ErrorCode.CONCURRENT_UPDATE)}
      }
      expect((body as {consumer_generation: number}).consumer_generation).toBe(2)
      return {status: 204}
    })
    await updateConsumer(client, C.toUpperCase(), {}, () => ({[CN1]: {VCPU: 1}}))
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      `GET /allocations/${C}`,
      `PUT /allocations/${C}`,
      `GET /allocations/${C}`,
      `PUT /allocations/${C}`,
      `GET /allocations/${C}`,
    ])
  })

  it("completes a POST /allocations body: providers by name as uuids, a consumer's generation and owners read where not given", async () => {
    const {client} = fakePlacement(({path}) => {
      if (path === '/resource_providers?name=cn1') return {body: {resource_providers: [{uuid: CN1, name: 'cn1', generation: 1}]}}
      if (path === `/allocations/${C}`) return {body: {allocations: {}, project_id: 'p', user_id: 'u', consumer_generation: 7}}
      return undefined
    })
    const out = await preparePost(client, {[C]: {allocations: {cn1: {resources: {VCPU: 1}}}}}, {})
    expect(out).toEqual({
      body: {[C]: {allocations: {[CN1]: {resources: {VCPU: 1}}}, consumer_generation: 7, project_id: 'p', user_id: 'u'}},
      version: '1.37',
      filledGenerations: true,
    })
  })
})
