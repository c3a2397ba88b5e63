/** The upgrade checks as functions of what the database reports, and oslo.upgradecheck's table. */
import {describe, expect, it} from 'vitest'
import {runUpgradeChecks, upgradeExitCode, upgradeTable, type UpgradeFacts} from '../../src/cli/services/upgrade-check.js'

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
  ...f,
})
const resultOf = (f: UpgradeFacts, name: string) => runUpgradeChecks(f).checks.find((c) => c.check === name)!

describe('upgrade checks', () => {
  it('a current database passes every check (exit 0)', () => {
    const report = runUpgradeChecks(facts())
    expect(report.checks.map((c) => c.result)).toEqual([0, 0, 0, 0])
    expect(upgradeExitCode(report)).toBe(0)
  })

  it('the schema: empty succeeds, older warns (db upgrade), newer fails', () => {
    expect(resultOf(facts({applied: []}), 'Schema Migrations')).toMatchObject({result: 0, details: expect.stringContaining('An empty database')})
    const older = resultOf(facts({applied: ['0001_initial']}), 'Schema Migrations')
    expect(older.result).toBe(1)
    expect(older.details).toContain('2 migration(s) pending (0002_topology, 0003_provider_order)')
    expect(older.details).toContain('placemat db upgrade --db /srv/placemat.db')
    const newer = facts({applied: [...known, '0004_later']})
    expect(resultOf(newer, 'Schema Migrations')).toMatchObject({result: 2, details: expect.stringContaining('0004_later')})
    expect(upgradeExitCode(runUpgradeChecks(newer))).toBe(2)
  })

  it("Placement's checks: providers without roots fail, incomplete consumers warn", () => {
    expect(resultOf(facts({providersWithoutRoot: 3}), 'Missing Root Provider IDs').result).toBe(2)
    const incomplete = resultOf(facts({consumersWithoutRecord: 2, incompleteConsumers: 5}), 'Incomplete Consumers')
    expect(incomplete.result).toBe(1)
    expect(incomplete.details).toContain('There are 2 incomplete consumers table records for existing allocations')
    expect(incomplete.details).toContain('5 consumer(s) have the incomplete-consumer project or user (p0)')
    expect(upgradeExitCode(runUpgradeChecks(facts({incompleteConsumers: 1})))).toBe(1)
  })

  it("a daemon of this machine: this release's succeeds; another release's, or one whose health is not ok, warns", () => {
    const daemon = {pid: 42, url: 'http://127.0.0.1:8778', answering: true, healthy: true}
    expect(resultOf(facts({daemon: {...daemon, schema: '0003_provider_order'}}), 'Daemon Serving the Database').result).toBe(0)
    const older = resultOf(facts({applied: ['0001_initial'], daemon: {...daemon, schema: '0001_initial'}}), 'Daemon Serving the Database')
    expect(older.result).toBe(1)
    expect(older.details).toContain('schema 0001_initial; this release\'s is 0003_provider_order')
    expect(older.details).toContain('Stop it (placemat db upgrade refuses a file a daemon serves)')
    const pg = resultOf(facts({sqlite: false, daemon: {...daemon}}), 'Daemon Serving the Database')
    expect(pg.details).toContain('a release before this one')
    expect(pg.details).toContain('Restart it with this release')
    expect(resultOf(facts({daemon: {...daemon, answering: false, healthy: false}}), 'Daemon Serving the Database')).toMatchObject({result: 1, details: expect.stringContaining('does not answer')})
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
    const long = table.split('\n').filter((l) => l.includes('word')).map((l) => l.slice(2, -2).trimEnd())
    expect(long[0]).toBe(`Details: ${'word '.repeat(12).trim()}`)
    expect(long.slice(1)).toEqual([`  ${'word '.repeat(11).trim()}`, `  ${'word '.repeat(7).trim()}`])
  })
})
