/**
 * Racks, rows and rooms made before the one namespace, on plain Placement: the next
 * `topology apply` moves each host out of the old aggregates into the new ones.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {PlacementClient} from '../../src/client/client.js'
import {HttpTransport} from '../../src/client/transports.js'
import {legacyNodeUuid, nodeUuid} from '../../src/core/topology.js'
import {startServer, type RunningServer} from '../../src/daemon/server.js'
import {plainProxy} from '../helpers/claim-cloud.js'
import {placemat} from '../helpers/cli.js'

describe('topology from before the one namespace, on plain Placement', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-legacy-'))
  let server: RunningServer
  let proxy: {url: string; close(): Promise<void>}
  let client: PlacementClient
  beforeAll(async () => {
    server = await startServer({db: path.join(dir, 'p.db'), host: '127.0.0.1', port: 0, auth: 'noauth2'})
    proxy = await plainProxy(server.url)
    client = new PlacementClient(new HttpTransport(server.url, 'admin'))
  })
  afterAll(async () => {
    await proxy?.close()
    await server?.close()
    fs.rmSync(dir, {recursive: true, force: true})
  })

  it('moves hosts from the old aggregates to the new ones, keeping their others', async () => {
    const other = '22222222-2222-2222-2222-222222222222'
    for (const [name, aggs] of [
      ['cn1', [legacyNodeUuid('rack', 'k1'), legacyNodeUuid('row', 'r1'), other]],
      ['cn2', [legacyNodeUuid('rack', 'k2')]],
    ] as const) {
      const p = await client.post('/resource_providers', {name}, {version: '1.20'})
      await client.put(
        `/resource_providers/${p.uuid}/aggregates`,
        {aggregates: aggs, resource_provider_generation: p.generation},
        {version: '1.19'},
      )
    }
    const layout = path.join(dir, 'layout.yaml')
    fs.writeFileSync(layout, 'rows:\n  - name: r1\n    racks:\n      - name: k1\n        hosts: [cn1]\n')
    const previous = path.join(dir, 'previous.yaml')
    fs.writeFileSync(
      previous,
      'rows:\n  - name: r1\n    racks:\n      - name: k1\n        hosts: [cn1]\n      - name: k2\n        hosts: [cn2]\n',
    )
    const r = await placemat(['topology', 'apply', layout, '--prune', '--previous', previous, '--url', proxy.url, '--token', 'admin'])
    expect(r.code, r.stderr).toBe(0)
    const aggsOf = async (name: string) => {
      const [p] = (await client.get('/resource_providers', {query: {name}})).resource_providers
      return (await client.get(`/resource_providers/${p.uuid}/aggregates`)).aggregates.sort()
    }
    expect(await aggsOf('cn1')).toEqual([nodeUuid('rack', 'k1'), nodeUuid('row', 'r1'), other].sort())
    expect(await aggsOf('cn2')).toEqual([])
  })
})
