/**
 * A client that sends its request and then shuts down its side of the connection (HTTP/1.0-style
 * clients, scripts, some balancers' checks) still reads: every request is answered, a write that
 * commits above all, on a daemon that syncs its commits to disk before it answers.
 */
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import {randomUUID} from 'node:crypto'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {startServer, type RunningServer} from '../../src/daemon/server.js'

/** Sends `request` raw, half-closes, and resolves with all the server sent before it closed. */
function halfClosed(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.end(request))
    let got = ''
    socket.on('data', (d) => (got += d))
    socket.on('close', () => resolve(got))
    socket.on('error', reject)
    socket.setTimeout(30_000, () => socket.destroy(new Error(`no close within 30 s; got: ${got}`)))
  })
}

const HEAD = 'x-auth-token: admin\r\nopenstack-api-version: placement 1.39\r\ncontent-type: application/json\r\n'

describe.each(['full', 'normal'] as const)('a half-closing client (durability %s)', (durability) => {
  let dir: string
  let server: RunningServer
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-half-close-'))
    server = await startServer({db: path.join(dir, 'p.db'), host: '127.0.0.1', port: 0, auth: 'noauth2', durability})
  })
  afterAll(async () => {
    await server.close()
    fs.rmSync(dir, {recursive: true, force: true})
  })

  it('gets an answer to every write it sent, with Content-Length or chunked', async () => {
    const port = Number(new URL(server.url).port)
    const sent: string[] = []
    const answers = await Promise.all(
      Array.from({length: 20}, (_, i) => {
        const name = `half-${i}-${randomUUID().slice(0, 8)}`
        sent.push(name)
        const body = JSON.stringify({name})
        const request =
          i % 2
            ? `POST /resource_providers HTTP/1.1\r\nhost: x\r\n${HEAD}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
            : `POST /resource_providers HTTP/1.1\r\nhost: x\r\n${HEAD}transfer-encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`
        return halfClosed(port, request)
      }),
    )
    expect(answers.map((a) => a.split('\r\n')[0])).toEqual(answers.map(() => 'HTTP/1.1 200 OK'))
    const list = (await (
      await fetch(`${server.url}/resource_providers`, {headers: {'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39'}})
    ).json()) as {resource_providers: Array<{name: string}>}
    expect(list.resource_providers.map((p) => p.name).sort()).toEqual(sent.sort())
  })

  it('gets an answer to a read', async () => {
    const port = Number(new URL(server.url).port)
    const answer = await halfClosed(port, `GET /resource_providers HTTP/1.1\r\nhost: x\r\n${HEAD}\r\n`)
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 200 OK')
  })
})
