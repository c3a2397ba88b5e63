/** Racks, rows and rooms as listings of their own, and their names beside aggregate uuids. */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {nodeUuid} from '../../src/core/topology.js'
import {placemat} from '../helpers/cli.js'

describe('rack, row and room listings', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-listings-'))
  const db = path.join(dir, 't.db')
  const t = ['--db', db]
  beforeAll(async () => {
    expect((await placemat(['db', 'init', ...t])).code).toBe(0)
    for (const h of ['cn1', 'cn2', 'cn3']) {
      expect((await placemat(['provider', 'create', h, ...t])).code).toBe(0)
      expect((await placemat(['inventory', 'set', h, 'VCPU=8', ...t])).code).toBe(0)
    }
    const layout = path.join(dir, 'layout.yaml')
    fs.writeFileSync(
      layout,
      'rooms:\n  - name: m1\n    rows:\n      - name: r1\n        racks:\n          - name: k1\n            hosts: [cn1, cn2]\nracks:\n  - name: k9\n    hosts: [cn3]\n',
    )
    expect((await placemat(['topology', 'apply', layout, ...t])).code).toBe(0)
  })
  afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

  it('rack list and show: where each stands, its hosts, usage and uuid', async () => {
    const list = await placemat(['rack', 'list', '-f', 'value', '-c', 'name,row,room,hosts,VCPU', ...t])
    expect(list.stdout).toBe('k1 r1 m1 2 0/16\nk9 None None 1 0/8\n')
    const shown = JSON.parse((await placemat(['rack', 'show', 'k1', '--json', ...t])).stdout)
    expect(shown).toMatchObject({
      name: 'k1',
      uuid: nodeUuid('rack', 'k1'),
      row: 'r1',
      room: 'm1',
      hosts: ['cn1', 'cn2'],
      capacity: {VCPU: 16},
    })
    expect((await placemat(['rack', 'show', 'k1', '-f', 'value', '-c', 'uuid', ...t])).stdout).toBe(`${nodeUuid('rack', 'k1')}\n`)
    const missing = await placemat(['rack', 'show', 'nope', ...t])
    expect(missing.code).toBe(3)
    expect(missing.stderr).toBe('placemat: no rack named nope\n')
    expect((await placemat(['row', 'list', '-f', 'value', '-c', 'name,room,hosts', ...t])).stdout).toBe('r1 m1 2\n')
    expect((await placemat(['room', 'list', '-f', 'value', '-c', 'name,hosts', ...t])).stdout).toBe('m1 2\n')
  })

  it('aggregate list names racks, rows and rooms beside their uuids', async () => {
    const out = await placemat(['aggregate', 'list', 'cn1', '-f', 'value', '-c', 'name', '--sort-column', 'name', ...t])
    expect(out.stdout).toBe('rack_k1\nroom_m1\nrow_r1\n')
  })
})
