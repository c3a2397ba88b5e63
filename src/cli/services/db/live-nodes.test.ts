/**
 * The nodes serving a database, as db status, upgrade check and db upgrade --contract say them
 * (no process, no database: a fake inspector): registered nodes read from their rows, the older
 * ones a contract would break (every unregistered trace among them), each in a line, and all in
 * a few words.
 */
import {describe, expect, it} from 'vitest'
import type {RegisteredNode} from '../../../store/node-registry.js'
import type {Inspector} from './inspect.js'
import {describeNode, describeUnregistered, liveNodesOf, olderNodes, summarizeNodes, type LiveNodes} from './live-nodes.js'

const T0 = Date.UTC(2025, 0, 1, 12, 0, 0)

const node = (release: string, host: string): RegisteredNode => ({
  id: `${host}-1`,
  release,
  schemaFrom: '0011',
  schemaTo: '0013',
  host,
  pid: 42,
  url: `http://${host}:8778`,
  startedAt: T0,
  beatAt: T0 + 60_000,
})

const trace = {where: '10.0.0.9', connections: 2, backendPids: [101, 102], since: T0}

describe('live nodes', () => {
  it('reads the registered nodes from their rows; a SQLite file with no pid record beside it leaves no older trace', async () => {
    let reads = 0
    const row = {
      id: 'a',
      release: '0.2.0',
      schema_from: '0011',
      schema_to: '0013',
      host: 'n1',
      pid: 7,
      url: 'http://n1:8778',
      started_at: T0,
      beat_at: T0,
    }
    const db: Inspector = {
      kind: 'sqlite',
      hasTable: async (name) => name === 'placemat_nodes',
      rows: async <T>() => {
        reads++
        return [row as T]
      },
      tables: async () => ['placemat_nodes'],
      integrity: async () => ['ok'],
      storage: async () => 'wal',
      close: async () => undefined,
    }
    const nodes = await liveNodesOf(db, '/nowhere/placement.db', T0 + 1000)
    expect(nodes.registered.map((n) => [n.host, n.pid, n.release, n.beatAt])).toEqual([['n1', 7, '0.2.0', T0]])
    expect([nodes.unregistered, reads]).toEqual([[], 1])
  })

  it('names as older the nodes of an earlier release and every unregistered trace, never the current release', () => {
    const nodes: LiveNodes = {registered: [node('0.1.0', 'old'), node('0.2.0', 'new')], unregistered: [trace]}
    const older = olderNodes(nodes, '0.2.0')
    expect(older).toHaveLength(2)
    expect(older[0]).toMatch(/^placemat 0\.1\.0 on old, pid 42/)
    expect(older[1]).toBe(describeUnregistered(trace, '0.2.0'))
  })

  it('says a node in a line: release, host, pid, url, since when, its last beat and schema', () => {
    expect(describeNode(node('0.2.0', 'n1'), T0 + 90_000)).toBe(
      'placemat 0.2.0 on n1, pid 42, http://n1:8778, serving since 2025-01-01 12:00:00Z, last beat 30 s ago (schema 0011 to 0013)',
    )
    expect(describeUnregistered(trace, '0.2.0')).toBe(
      "release before 0.2.0 (not registered): 2 connection(s) from 10.0.0.9 with no application_name running placemat's statements (backend pid 101, 102; the oldest open since 2025-01-01 12:00:00Z)",
    )
  })

  it('counts the nodes by release, and the places older traces come from', () => {
    expect(summarizeNodes({registered: [], unregistered: []})).toBe('none live')
    expect(summarizeNodes({registered: [node('0.2.0', 'a'), node('0.1.0', 'b'), node('0.2.0', 'c')], unregistered: [trace]})).toMatch(
      /^1 of placemat 0\.1\.0, 2 of placemat 0\.2\.0, traces of a release before .* \(not registered\) from 1 place\(s\)$/,
    )
  })
})
