/** The upgrade checks as functions of what the database reports, and oslo.upgradecheck's table. */
import {describe, expect, it} from 'vitest'
import {runUpgradeChecks, upgradeExitCode, upgradeTable, type UpgradeFacts} from './upgrade-check.js'

const known = ['0001_initial', '0002_topology', '0003_provider_order']
const facts = (f: Partial<UpgradeFacts> = {}): UpgradeFacts => ({
  database: '/srv/placemat.db',
  sqlite: true,
  applied: known,
  known,
  providersWithoutRoot: 0,
  consumersWithoutRecord: 0,
  incompleteConsumers: 0,
  incompleteIds: {project: 'p0', user: 'p0'},
  daemon: null,
  release: '0.2.0',
  minRelease: null,
  nodes: {registered: [], unregistered: []},
  ...f,
})
const node = (release: string, pid = 7) => ({
  id: `n${pid}`,
  release,
  schemaFrom: '0013_keyed_check_v2',
  schemaTo: '0014_retire_keyed_check_v1',
  host: 'api-1',
  pid,
  url: `http://api-1:${8000 + pid}`,
  startedAt: Date.now() - 60_000,
  beatAt: Date.now() - 2000,
})
const resultOf = (f: UpgradeFacts, name: string) => runUpgradeChecks(f).checks.find((c) => c.check === name)!

describe('upgrade checks', () => {
  it('a current database passes every check (exit 0)', () => {
    const report = runUpgradeChecks(facts())
    expect(report.checks.map((c) => c.result)).toEqual([0, 0, 0, 0])
    expect(upgradeExitCode(report)).toBe(0)
  })

  it("the schema: empty succeeds, older warns (db upgrade), a newer release's expand warns, its contract fails", () => {
    expect(resultOf(facts({applied: []}), 'Schema Migrations')).toMatchObject({
      result: 0,
      details: expect.stringContaining('An empty database'),
    })
    const older = resultOf(facts({applied: ['0001_initial']}), 'Schema Migrations')
    expect(older.result).toBe(1)
    expect(older.details).toContain('2 migration(s) pending (0002_topology, 0003_provider_order)')
    expect(older.details).toContain('placemat db upgrade --db /srv/placemat.db')
    // A newer release expanded it: served here until its contract (a rollback).
    const expanded = facts({applied: [...known, '0004_later']})
    expect(resultOf(expanded, 'Schema Migrations')).toMatchObject({
      result: 1,
      details: expect.stringContaining('A newer placemat expanded it (migrations 0004_later'),
    })
    const contracted = facts({applied: [...known, '0004_later'], minRelease: {release: '0.3.0', migration: '0004_later'}})
    expect(resultOf(contracted, 'Schema Migrations')).toMatchObject({
      result: 2,
      details: expect.stringContaining(
        'was contracted by placemat 0.3.0 (0004_later): it needs placemat 0.3.0 or later; this is placemat 0.2.0',
      ),
    })
    expect(upgradeExitCode(runUpgradeChecks(contracted))).toBe(2)
  })

  it("the schema: this release's expand pending points at --expand, its contract at --contract", () => {
    const all = ['0011_change_images', '0012_nodes', '0013_keyed_check_v2', '0014_retire_keyed_check_v1']
    const expand = resultOf(facts({known: all, applied: ['0011_change_images']}), 'Schema Migrations')
    expect(expand.result).toBe(1)
    expect(expand.details).toContain('placemat db upgrade --expand --db /srv/placemat.db')
    expect(expand.details).toContain("This release's contract is pending (0014_retire_keyed_check_v1)")
    const contract = resultOf(facts({known: all, applied: all.slice(0, 3)}), 'Schema Migrations')
    expect(contract.result).toBe(1)
    expect(contract.details).not.toContain('--expand')
    expect(contract.details).toContain('placemat db upgrade --contract --db /srv/placemat.db')
    expect(resultOf(facts({known: all, applied: all, minRelease: {release: '0.2.0', migration: all[3]}}), 'Schema Migrations').result).toBe(
      0,
    )
  })

  it("Placement's checks: providers without roots fail, incomplete consumers warn", () => {
    expect(resultOf(facts({providersWithoutRoot: 3}), 'Missing Root Provider IDs').result).toBe(2)
    const incomplete = resultOf(facts({consumersWithoutRecord: 2, incompleteConsumers: 5}), 'Incomplete Consumers')
    expect(incomplete.result).toBe(1)
    expect(incomplete.details).toContain('There are 2 incomplete consumers table records for existing allocations')
    expect(incomplete.details).toContain('5 consumer(s) have the incomplete-consumer project or user (p0)')
    expect(upgradeExitCode(runUpgradeChecks(facts({incompleteConsumers: 1})))).toBe(1)
  })

  it('the nodes: of this release succeed; of an older release (registered or not) and of a newer one warn, as does an unhealthy local daemon', () => {
    expect(resultOf(facts({nodes: {registered: [node('0.2.0')], unregistered: []}}), 'Nodes Serving the Database')).toMatchObject({
      result: 0,
      details: expect.stringContaining(
        '1 node(s) of placemat 0.2.0 serve /srv/placemat.db: placemat 0.2.0 on api-1, pid 7, http://api-1:8007',
      ),
    })
    const older = resultOf(
      facts({
        nodes: {
          registered: [node('0.1.5', 8)],
          unregistered: [{where: '10.0.0.4', connections: 3, backendPids: [101, 102, 103], since: Date.now()}],
        },
      }),
      'Nodes Serving the Database',
    )
    expect(older.result).toBe(1)
    expect(older.details).toContain(
      '2 node(s) of a release before placemat 0.2.0 serve /srv/placemat.db: placemat 0.1.5 on api-1, pid 8, http://api-1:8008',
    )
    expect(older.details).toContain('release before 0.2.0 (not registered): 3 connection(s) from 10.0.0.4 with no application_name')
    expect(older.details).toContain('placemat db upgrade --contract')
    const pidRecord = resultOf(
      facts({applied: ['0001_initial'], nodes: {registered: [], unregistered: [{where: 'api-1', pid: 42, url: 'http://127.0.0.1:8778'}]}}),
      'Nodes Serving the Database',
    )
    expect(pidRecord.details).toContain('release before 0.2.0 (not registered) on api-1, pid 42, http://127.0.0.1:8778')
    expect(pidRecord.details).toContain('placemat db upgrade --expand')
    expect(resultOf(facts({nodes: {registered: [node('0.3.0')], unregistered: []}}), 'Nodes Serving the Database')).toMatchObject({
      result: 1,
      details: expect.stringContaining('1 node(s) of a newer release'),
    })
    const daemon = {pid: 42, url: 'http://127.0.0.1:8778', answering: false, healthy: false}
    expect(resultOf(facts({daemon}), 'Nodes Serving the Database')).toMatchObject({
      result: 1,
      details: expect.stringContaining('does not answer'),
    })
  })
})

describe("placement-status's table", () => {
  it('one column, a rule under the title and each check, details wrapped at 60 characters with a two-space indent', () => {
    const table = upgradeTable({
      name: 'Upgrade Check Results',
      checks: [
        {check: 'Cells v2', result: 0, details: null},
        {check: 'Placement API', result: 2, details: 'There is no placement-api endpoint in the service catalog.'},
        {check: 'Long', result: 1, details: 'word '.repeat(30).trim()},
      ],
    })
    // As Python's textwrap.wrap(details, 60, subsequent_indent='  ') and PrettyTable(hrules=ALL) lay it out.
    const width = 'Details: '.length + 'word '.repeat(12).trim().length
    const row = (l: string) => `| ${l.padEnd(width)} |`
    const rule = `+${'-'.repeat(width + 2)}+`
    expect(table.split('\n').slice(0, 11)).toEqual([
      rule,
      row('Upgrade Check Results'),
      rule,
      row('Check: Cells v2'),
      row('Result: Success'),
      row('Details: None'),
      rule,
      row('Check: Placement API'),
      row('Result: Failure'),
      row('Details: There is no placement-api endpoint in the service catalog.'),
      rule,
    ])
    const long = table
      .split('\n')
      .filter((l) => l.includes('word'))
      .map((l) => l.slice(2, -2).trimEnd())
    expect(long[0]).toBe(`Details: ${'word '.repeat(12).trim()}`)
    expect(long.slice(1)).toEqual([`  ${'word '.repeat(11).trim()}`, `  ${'word '.repeat(7).trim()}`])
  })
})
