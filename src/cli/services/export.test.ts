/**
 * The export service against a fake backend (no process, no HTTP): a snapshot's text as YAML or
 * JSON with its counts, plain Placement's snapshot warned of once; the cloud as an apply file
 * from the backend's State; a Placement database URL it cannot take refused without its password.
 */
import {describe, expect, it} from 'vitest'
import YAML from 'yaml'
import {stateFromSnapshot} from '../../core/snapshot.js'
import {fakeBackend, fakePlacement} from '../../../test/helpers/fake-backend.js'
import {inv} from '../../../test/helpers/records.js'
import {exitCodeOf} from '../failure.js'
import {exportApplyFile, exportSnapshotText, exportToPlacement, KEEPS_NOTHING} from './export.js'

const CN1 = '00000000-0000-4000-8000-000000000001'
const C1 = 'cccccccc-0000-4000-8000-000000000001'

/** Plain Placement holding cn1 (8 VCPU) and C1 on it. */
function plain() {
  const {client} = fakePlacement(({path}) => {
    if (path === '/resource_classes') return {body: {resource_classes: [{name: 'VCPU'}]}}
    if (path.startsWith('/traits')) return {body: {traits: []}}
    if (path === '/resource_providers') return {body: {resource_providers: [{uuid: CN1, name: 'cn1', generation: 1}]}}
    if (path === `/resource_providers/${CN1}/inventories`) return {body: {inventories: {VCPU: inv(8)}}}
    if (path === `/resource_providers/${CN1}/traits`) return {body: {traits: []}}
    if (path === `/resource_providers/${CN1}/aggregates`) return {body: {aggregates: []}}
    if (path === `/resource_providers/${CN1}/allocations`) return {body: {allocations: {[C1]: {resources: {VCPU: 2}}}}}
    if (path === `/allocations/${C1}`)
      return {body: {allocations: {[CN1]: {resources: {VCPU: 2}}}, project_id: 'p', user_id: 'u', consumer_generation: 1}}
    return undefined
  })
  return fakeBackend({kind: 'placement', client, ownRecords: async () => undefined, disabledReasons: async () => new Map()})
}

/** A --db file's own State of cn1 with C1. */
const held = () =>
  fakeBackend({
    heldState: async () =>
      stateFromSnapshot({
        classes: ['VCPU'],
        providers: [{uuid: CN1, name: 'cn1', generation: 1, inventories: {VCPU: inv(8)}}],
        consumers: [{uuid: C1, project_id: 'p', user_id: 'u', consumer_generation: 1, allocations: {[CN1]: {resources: {VCPU: 2}}}}],
      }),
    ownRecords: async () => undefined,
    disabledReasons: async () => new Map(),
  })

describe('export', () => {
  it("writes plain Placement's cloud as a snapshot's YAML or JSON with its counts, warning once that it keeps nothing of placemat's", async () => {
    const warned: string[] = []
    const yaml = await exportSnapshotText(plain(), {json: false, warn: (m) => warned.push(m)})
    expect([yaml.providers, yaml.consumers]).toEqual([1, 1])
    expect(YAML.parse(yaml.text).consumers[0]).toMatchObject({uuid: C1, allocations: {[CN1]: {VCPU: 2}}})
    const json = await exportSnapshotText(plain(), {json: true, warn: () => undefined})
    expect(JSON.parse(json.text)).toEqual(YAML.parse(yaml.text))
    expect(json.text.endsWith('}\n')).toBe(true)
    expect(warned).toEqual([KEEPS_NOTHING])
  })

  it("writes the cloud as an apply file from the backend's State, saying what it is", async () => {
    const text = await exportApplyFile(held(), false)
    expect(text.split('\n')[0]).toBe('# placemat apply file: the cloud as it is (placemat export --format apply)')
    expect(YAML.parse(text).providers[0]).toMatchObject({name: 'cn1', uuid: CN1, inventories: {VCPU: {total: 8}}})
    expect(JSON.parse(await exportApplyFile(held(), true))).toEqual(YAML.parse(text))
  })

  it('refuses a database URL Placement cannot have (exit 2), never showing its password', async () => {
    const err = await exportToPlacement(held(), 'ftp://placement:SECRET@db/placement', () => undefined).catch((e) => e)
    expect(exitCodeOf(err)).toBe(2)
    expect(err.message).not.toContain('SECRET')
    expect(err.message).toMatch(
      /^ftp:\/\/placement:\*+@db\/placement: Placement's database is MySQL\/MariaDB, PostgreSQL or SQLite, not ftp$/,
    )
  })
})
