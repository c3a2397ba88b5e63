#!/usr/bin/env node
/**
 * Builds the state fixtures/reshape/vgpu.yaml runs on, through the Placement API:
 * a compute node "compute-vgpu-1" with VCPU, MEMORY_MB and VGPU:8 (max_unit 4) on the
 * node itself (the pre-nested layout), and two instances holding VGPU there.
 *
 *   npx tsc -p . && node scripts/setup-vgpu-fixture.mjs --db /tmp/vgpu.db
 *   node scripts/setup-vgpu-fixture.mjs --url http://127.0.0.1:8778 --token admin
 *   node bin/run.js reshape fixtures/reshape/vgpu.yaml --db /tmp/vgpu.db --dry-run
 */
import path from 'node:path'
import {parseArgs} from 'node:util'
import {fileURLToPath} from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const {values} = parseArgs({options: {db: {type: 'string'}, url: {type: 'string'}, token: {type: 'string'}}})
if (!values.db === !values.url) {
  console.error('usage: setup-vgpu-fixture.mjs (--db FILE | --url URL [--token TOKEN])')
  process.exit(2)
}
const {PlacementClient} = await import(path.join(root, 'dist/src/client/client.js'))
const {HttpTransport} = await import(path.join(root, 'dist/src/client/transports.js'))
const {LocalTransport} = await import(path.join(root, 'dist/src/cli/backend/local-transport.js'))
const transport = values.db ? await LocalTransport.open(values.db) : new HttpTransport(values.url, values.token)
const client = new PlacementClient(transport)

const VGPU = {
  computeNode: '0d0d0d0d-0000-4000-8000-000000000001',
  vmA: 'a0a0a0a0-0000-4000-8000-00000000000a',
  vmB: 'b0b0b0b0-0000-4000-8000-00000000000b',
  project: 'f0f0f0f0-0000-4000-8000-000000000001',
  user: 'e0e0e0e0-0000-4000-8000-000000000001',
}

try {
  await client.post('/resource_providers', {uuid: VGPU.computeNode, name: 'compute-vgpu-1'})
  await client.put(`/resource_providers/${VGPU.computeNode}/inventories`, {
    resource_provider_generation: 0,
    inventories: {
      VCPU: {total: 32, allocation_ratio: 4.0},
      MEMORY_MB: {total: 65536, reserved: 512},
      VGPU: {total: 8, max_unit: 4},
    },
  })
  const instance = (resources) => ({
    allocations: {[VGPU.computeNode]: {resources}},
    project_id: VGPU.project,
    user_id: VGPU.user,
    consumer_generation: null,
    consumer_type: 'INSTANCE',
  })
  await client.put(`/allocations/${VGPU.vmA}`, instance({VCPU: 4, MEMORY_MB: 8192, VGPU: 2}))
  await client.put(`/allocations/${VGPU.vmB}`, instance({VCPU: 8, MEMORY_MB: 16384, VGPU: 4}))
  console.log(`compute-vgpu-1 ${VGPU.computeNode}: VGPU 6 of 8 used by ${VGPU.vmA} (2) and ${VGPU.vmB} (4)`)
} finally {
  await client.close()
}
