/**
 * A small cloud with a topology for the candidates / claim tests: hosts (root providers
 * with VCPU and MEMORY_MB), optionally a NIC child with SRIOV_NET_VF, placed in
 * rooms > rows > racks by PUT /placemat/v1/topology/layout. Seeded through any
 * PlacementClient (a daemon over HTTP, or a file through the local transport).
 */
import http from 'node:http'
import {PlacementClient} from '../../src/client/client.js'
import {HttpTransport} from '../../src/client/transports.js'
import {LocalTransport} from '../../src/cli/backend/local-transport.js'
import type {Layout} from '../../src/core/topology.js'

export interface HostSpec {
  name: string
  uuid: string
  vcpu?: number
  memory?: number
  nic?: {name: string; uuid: string; vfs: number; traits?: string[]}
}

export const U = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`

export async function seed(client: PlacementClient, hosts: HostSpec[], layout?: Layout): Promise<void> {
  for (const h of hosts) {
    await client.post('/resource_providers', {name: h.name, uuid: h.uuid})
    await client.put(`/resource_providers/${h.uuid}/inventories`, {
      resource_provider_generation: 0,
      inventories: {VCPU: {total: h.vcpu ?? 8}, MEMORY_MB: {total: h.memory ?? 16384}},
    })
    if (h.nic) {
      await client.post('/resource_providers', {name: h.nic.name, uuid: h.nic.uuid, parent_provider_uuid: h.uuid})
      await client.put(`/resource_providers/${h.nic.uuid}/inventories`, {
        resource_provider_generation: 0,
        inventories: {SRIOV_NET_VF: {total: h.nic.vfs}},
      })
      if (h.nic.traits?.length) {
        for (const t of h.nic.traits) {
          await client.request('PUT', `/traits/${t}`)
        }
        await client.put(`/resource_providers/${h.nic.uuid}/traits`, {resource_provider_generation: 1, traits: h.nic.traits})
      }
    }
  }
  if (layout) await client.put('/placemat/v1/topology/layout', layout)
}

export async function seedUrl(url: string, hosts: HostSpec[], layout?: Layout): Promise<void> {
  const client = new PlacementClient(new HttpTransport(url, 'admin'))
  await seed(client, hosts, layout)
}

export async function seedFile(file: string, hosts: HostSpec[], layout?: Layout): Promise<void> {
  const client = new PlacementClient(await LocalTransport.open(file))
  try {
    await seed(client, hosts, layout)
  } finally {
    await client.close()
  }
}

/**
 * A "plain OpenStack Placement" in front of a placemat daemon: every request is passed
 * on, except placemat's own API (/placemat/...), which answers 404 as Placement would.
 * `seen` collects each request as `METHOD URL`.
 */
export const plainProxy = (target: string, seen?: string[]) => proxyTo(target, {plain: true, seen})

/** A proxy in front of a daemon that records each request as `METHOD URL` in `seen`; `plain` hides placemat's own API. */
export async function proxyTo(
  target: string,
  opts: {plain?: boolean; seen?: string[]} = {},
): Promise<{url: string; close(): Promise<void>}> {
  const server = http.createServer(async (req, res) => {
    opts.seen?.push(`${req.method} ${req.url}`)
    if (opts.plain && (req.url ?? '').startsWith('/placemat/')) {
      res.writeHead(404, {'content-type': 'application/json'})
      res.end(
        JSON.stringify({
          errors: [{status: 404, title: 'Not Found', detail: 'The resource could not be found.\n\n', code: 'placement.undefined_code'}],
        }),
      )
      return
    }
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const headers: Record<string, string> = {}
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers[k] = v
    const r = await fetch(target + req.url, {method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined})
    const out: Record<string, string> = {}
    r.headers.forEach((v, k) => {
      if (k !== 'content-length' && k !== 'transfer-encoding' && k !== 'connection') out[k] = v
    })
    res.writeHead(r.status, out)
    res.end(Buffer.from(await r.arrayBuffer()))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const addr = server.address() as {port: number}
  return {
    url: `http://127.0.0.1:${addr.port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
