/**
 * audit() on a cloud given as records, and the deletion of orphans against a fake Placement (no
 * process, no HTTP): each kind of finding where it is and nowhere else, consumers without
 * allocations only where every record is listed, and an orphan gone meanwhile counted deleted.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import type {ConsumerRecord, ProviderRecord} from '../../core/wire.js'
import {fakePlacement, refusal} from '../../../test/helpers/fake-backend.js'
import {inv} from '../../../test/helpers/records.js'
import type {CloudView} from '../backend/backend.js'
import {audit, countByKind, deleteOrphans, findingRows, INCOMPLETE_ID, readKnownConsumers} from './audit.js'

const CN1 = '00000000-0000-4000-8000-000000000001'
const C1 = 'cccccccc-0000-4000-8000-000000000001'
const C2 = 'cccccccc-0000-4000-8000-000000000002'
const C3 = 'cccccccc-0000-4000-8000-000000000003'

/** cn1 with 4 VCPU (1 reserved) using 5; C1 known, C2 an orphan of no real project, C3 holding nothing. */
function cloud(everyConsumer: boolean): CloudView {
  const cn1: ProviderRecord = {
    uuid: CN1,
    name: 'cn1',
    generation: 1,
    parent_provider_uuid: null,
    root_provider_uuid: CN1,
    inventories: {VCPU: inv(4, {reserved: 1})},
    usages: {VCPU: 5},
    traits: [],
    aggregates: [],
  }
  const consumers: ConsumerRecord[] = [
    {uuid: C1, project_id: 'p', user_id: 'u', allocations: {[CN1]: {resources: {VCPU: 2}}}},
    {uuid: C2, project_id: INCOMPLETE_ID, user_id: 'u', allocations: {[CN1]: {resources: {VCPU: 3}}}},
    {uuid: C3, project_id: 'p', user_id: 'u', allocations: {}},
  ]
  return {providers: new Map([[CN1, cn1]]), consumers: new Map(consumers.map((c) => [c.uuid, c])), everyConsumer}
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-audit-'))
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

describe('audit', () => {
  it('finds an orphan, a provider over capacity, an incomplete consumer and an empty one, each once', () => {
    const {findings, checked} = audit(cloud(true), new Set([C1]))
    expect(findings.map((f) => [f.kind, 'consumer' in f ? f.consumer : 'provider' in f ? f.provider : f.group])).toEqual([
      ['orphan_allocations', C2],
      ['over_capacity', CN1],
      ['empty_consumer', C3],
      ['incomplete_consumer', C2],
    ])
    expect(checked).toEqual({providers: 1, consumers: 3, orphans_checked: true, empty_consumers_checked: true})
    expect(findingRows(findings, cloud(true))[1]).toEqual({
      kind: 'over-capacity',
      subject: `cn1 ${CN1}`,
      detail: 'VCPU used 5 > capacity 3 (total 4, reserved 1, ratio 1)',
    })
  })

  it('looks for no orphan without the known consumers, and for no empty consumer where not every record is listed', () => {
    const {findings, checked} = audit(cloud(false), undefined)
    expect(countByKind(findings)).toEqual({
      orphan_allocations: 0,
      over_capacity: 1,
      empty_consumer: 0,
      incomplete_consumer: 1,
      group_violation: 0,
    })
    expect([checked.orphans_checked, checked.empty_consumers_checked]).toEqual([false, false])
  })

  it('reads the known consumers one a line with comments, or as a YAML list, each written canonically', () => {
    const lines = path.join(dir, 'known.txt')
    fs.writeFileSync(lines, `# instances\n${C1.toUpperCase()}\n\n${C2}  # a migration\n`)
    expect([...readKnownConsumers(lines)]).toEqual([C1, C2])
    const list = path.join(dir, 'known.yaml')
    fs.writeFileSync(list, `- ${C3}\n`)
    expect([...readKnownConsumers(list)]).toEqual([C3])
  })

  it('refuses a known-consumers file with what is not a uuid, naming the line', () => {
    const file = path.join(dir, 'bad.txt')
    fs.writeFileSync(file, `${C1}\nweb-1\n`)
    expect(() => readKnownConsumers(file)).toThrow(`${file}: not consumer uuids: line 2: web-1`)
  })

  it('deletes each orphan, one gone meanwhile counted as deleted and one refused marked with why', async () => {
    const {client, calls} = fakePlacement(({path: p}) => {
      if (p === `/allocations/${C1}`) return {status: 404, body: refusal('no such consumer')}
      if (p === `/allocations/${C2}`) return {status: 204}
      return {status: 403, body: refusal('not allowed')}
    })
    const orphan = (consumer: string) => ({kind: 'orphan_allocations' as const, consumer, allocations: {}})
    const findings = [orphan(C1), orphan(C2), orphan(C3)]
    expect(await deleteOrphans(client, findings)).toEqual({deleted: 2, failed: 1})
    expect(findings.map((f) => ('deleted' in f ? 'deleted' : (f as {error?: string}).error))).toEqual([
      'deleted',
      'deleted',
      '403: not allowed',
    ])
    expect(calls.every((c) => c.method === 'DELETE')).toBe(true)
  })
})
