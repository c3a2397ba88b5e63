/**
 * Placement groups on the real binary, on a file (--db) and on a daemon: three replicas spread
 * by row; a rack move that would put two in one row is refused by `topology apply` and by
 * `rack add`, shown by their dry runs, and reported by `audit` and `group show` when forced.
 * Against plain Placement, groups are refused with a clear word.
 */
import fs from 'node:fs'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import YAML from 'yaml'
import {placemat as run, type Result} from '../helpers/db-tools.js'
import {startEndpoints, stopEndpoints, type Endpoints} from '../helpers/endpoints.js'
import {threeRooms} from '../helpers/three-rooms.js'

const C = (i: number) => `55555555-0000-4000-8000-${String(i).padStart(12, '0')}`

async function ok(args: string[]): Promise<Result> {
  const r = await run(args)
  expect(r.code, `placemat ${args.join(' ')}\n${r.stderr}\n${r.stdout.slice(0, 2000)}`).toBe(0)
  return r
}

/** 3 rooms x 2 rows x 2 racks x 2 hosts, named cn-<room><row><rack><n>. */
function cloudFiles(dir: string): {cloud: string; layout: string; moved: string} {
  const {hosts, layout} = threeRooms('cn')
  const moved = structuredClone(layout)
  moved.rooms![0].rows![0].racks!.push(moved.rooms![0].rows![1].racks!.shift()!) // rack-121 into row-11
  const files = {cloud: path.join(dir, 'cloud.yaml'), layout: path.join(dir, 'layout.yaml'), moved: path.join(dir, 'moved.yaml')}
  fs.writeFileSync(files.cloud, YAML.stringify({providers: hosts.map((name) => ({name, inventories: {VCPU: 16}}))}))
  fs.writeFileSync(files.layout, YAML.stringify(layout))
  fs.writeFileSync(files.moved, YAML.stringify(moved))
  return files
}

describe('placement groups on the command line', () => {
  let e: Endpoints
  let files: ReturnType<typeof cloudFiles>
  beforeAll(async () => {
    e = await startEndpoints('placemat-cli-groups-')
    files = cloudFiles(e.dir)
  })
  afterAll(() => stopEndpoints(e))

  const targets = () => [
    {what: 'a file', args: ['--db', path.join(e.dir, 'g.db')]},
    {what: 'a daemon', args: e.daemon},
  ]

  it('three replicas spread by row stay spread: a rack move is refused, dry-run shows it, audit reports it when forced', async () => {
    await ok(['db', 'init', '--db', path.join(e.dir, 'g.db')])
    for (const {what, args} of targets()) {
      await ok(['apply', files.cloud, ...args])
      await ok(['topology', 'apply', files.layout, ...args])
      await ok(['group', 'create', 'db-replicas', '--policy', 'anti-affinity', '--level', 'row', ...args])
      const rows: string[] = []
      for (const i of [1, 2, 3]) {
        await ok(['claim', C(i), '--group', 'db-replicas', '--resources', 'VCPU:4', '--project', 'p', '--user', 'u', ...args])
      }
      const shown = JSON.parse((await ok(['group', 'show', 'db-replicas', '--json', ...args])).stdout)
      for (const p of shown.placements) rows.push(...p.row)
      expect(new Set(rows).size, what).toBe(3)
      expect(shown.violations).toEqual([])
      // The claims landed on cn-1111, cn-1211 and cn-2111 (the first candidate each rule allows):
      // moving rack-121 into row-11 would put two replicas in row-11.
      expect(shown.placements.map((p: any) => p.hosts[0])).toEqual(['cn-1111', 'cn-1211', 'cn-2111'])

      // A reshape taking C2's allocation to cn-1111 (C1's row): its dry run says so, the write refuses.
      const plan = path.join(e.dir, 'move.yaml')
      fs.writeFileSync(plan, YAML.stringify({moves: [{from: 'cn-1211', to: 'cn-1111', resources: {VCPU: 4}, consumers: [C(2)]}]}))
      const reshapeDry = await run(['reshape', plan, '--dry-run', ...args])
      expect(reshapeDry.code, what).toBe(4)
      expect(reshapeDry.stdout).toContain('! breaks group db-replicas (anti-affinity by row): 2 members in row row-11')
      const reshaped = await run(['reshape', plan, ...args])
      expect(reshaped.code, what).toBe(4)
      expect(reshaped.stderr).toContain('--allow-violations to go ahead anyway')

      // The dry run exits as the apply does (4), with its message said as a dry run's, after the plan.
      const dry = await run(['topology', 'apply', files.moved, '--dry-run', ...args])
      expect(dry.code, what).toBe(4)
      expect(dry.stdout).toContain('! breaks group db-replicas (anti-affinity by row): 2 members in row row-11 (at most 1)')
      expect(dry.stdout).toContain('Dry run: nothing was changed.')
      const refused = await run(['topology', 'apply', files.moved, ...args])
      expect(refused.code, what).toBe(4)
      expect(refused.stderr).toContain(
        '[placemat.affinity_violation]: Placement group rule violated: group db-replicas (anti-affinity by row)',
      )
      expect(refused.stderr).toContain(`[row-11: ${[C(1), C(2)].sort().join(', ')}]`)
      expect(refused.stderr).toContain('--allow-violations to go ahead anyway')
      expect(dry.stderr).toBe(refused.stderr.replace(']: Placement group', ']: dry run: the change would fail: Placement group'))
      expect((await ok(['topology', 'apply', files.moved, '--dry-run', '--allow-violations', ...args])).stdout).toContain(
        '! breaks group db-replicas',
      )
      const byRack = await run(['rack', 'add', 'rack-111', 'cn-1211', ...args])
      expect(byRack.code, what).toBe(4)
      expect(byRack.stderr).toContain('group db-replicas')
      const byRackDry = await run(['rack', 'add', 'rack-111', 'cn-1211', '--dry-run', ...args])
      expect(byRackDry.code, what).toBe(4)
      expect(byRackDry.stderr).toBe(byRack.stderr.replace(']: Placement group', ']: dry run: the change would fail: Placement group'))
      expect((await ok(['audit', ...args])).stdout).toContain('No findings')

      await ok(['topology', 'apply', files.moved, '--allow-violations', ...args])
      const audit = await run(['audit', '--exit-code', ...args])
      expect(audit.code).toBe(7)
      expect(audit.stdout).toMatch(/group\s+db-replicas \(anti-affinity by row\)\s+2 members in row row-11 \(at most 1\)/)
      const audited = JSON.parse((await ok(['audit', '--json', ...args])).stdout)
      expect(audited.findings).toEqual([
        {
          kind: 'group_violation',
          group: 'db-replicas',
          rule: 'anti-affinity by row',
          soft: false,
          why: '2 members in row row-11 (at most 1)',
          domains: [{name: 'row-11', members: [C(1), C(2)].sort()}],
        },
      ])
      const drawing = (await ok(['group', 'show', 'db-replicas', ...args])).stdout
      expect(drawing).toContain('Broken: group db-replicas')
      expect(drawing).toContain('! row row-11 (2 members)')
      expect((await ok(['group', 'list', ...args])).stdout).toMatch(/db-replicas\s+anti-affinity by row\s+3\s+no \(1 breach\)/)
    }
  })

  it('group commands: create, add, remove, delete; bad input and plain Placement are refused clearly', async () => {
    const args = e.daemon
    await ok(['group', 'create', 'web', '--policy', 'max-per', '--max-per', '2', '--level', 'host', ...args])
    const missing = await run(['group', 'create', 'x', '--policy', 'max-per', '--level', 'host', ...args])
    expect(missing.code).toBe(6)
    expect(missing.stderr).toContain('needs max_per')
    expect(JSON.parse((await ok(['group', 'add', 'web', C(1), C(2), '--json', ...args])).stdout).members).toEqual([C(1), C(2)])
    // C(1) and C(2) both sit in row-11 now (after the forced move), on different hosts: fine for max 2 per host.
    expect(JSON.parse((await ok(['group', 'remove', 'web', C(1), '--json', ...args])).stdout).members).toEqual([C(2)])
    expect((await ok(['group', 'list', ...args])).stdout).toContain('at most 2 per host')
    await ok(['group', 'delete', 'web', ...args])
    expect((await run(['group', 'show', 'web', ...args])).code).toBe(3)
    for (const cmd of [
      ['group', 'list'],
      ['claim', C(9), '--group', 'db-replicas', '--resources', 'VCPU:1', '--project', 'p', '--user', 'u'],
    ]) {
      const plain = await run([...cmd, ...e.plain])
      expect(plain.code, cmd.join(' ')).toBe(2)
      expect(plain.stderr).toContain('placement groups are kept by placemat')
      expect(plain.stderr).toContain('--groups FILE')
    }
  })

  it('on plain Placement, a local groups file: claims keep the rule (checked when chosen), audit reports breaches', async () => {
    const groups = path.join(e.dir, 'groups.yaml')
    const local = ['--groups', groups, '--layout', files.layout, ...e.plain]
    await ok(['apply', files.cloud, ...e.plain])
    await ok(['topology', 'apply', files.layout, ...e.plain])
    await ok(['group', 'create', 'db-replicas', '--policy', 'anti-affinity', '--level', 'row', ...local])
    const claim = (i: number, ...where: string[]) =>
      run(['claim', C(i), '--group', 'db-replicas', '--resources', 'VCPU:4', '--project', 'p', '--user', 'u', ...where, ...local])
    // The first two where the rack move below needs them: the endpoint's candidate order is that
    // of its providers' creation, which apply's concurrent writes leave to chance.
    expect((await claim(11, '--in-tree', 'cn-1111')).code).toBe(0)
    // A host in the first one's row breaks the rule: refused, and nothing is written.
    const refused = await claim(12, '--in-tree', 'cn-1121')
    expect(refused.code, refused.stderr).toBe(4)
    expect(refused.stderr).toContain('the anti-affinity rule of group db-replicas (by row) excludes it')
    expect((await claim(12, '--in-tree', 'cn-1211')).code).toBe(0)
    expect((await claim(13)).code).toBe(0)
    const file = YAML.parse(fs.readFileSync(groups, 'utf8'))
    expect(file.groups).toEqual([{name: 'db-replicas', policy: 'anti-affinity', level: 'row', members: [C(11), C(12), C(13)]}])
    const shown = JSON.parse((await ok(['group', 'show', 'db-replicas', '--json', ...local])).stdout)
    const rows = shown.placements.map((p: any) => p.row[0])
    expect(new Set(rows).size).toBe(3)
    // The move below brings rack-121 into row-11: it breaks the rule if members sit in both.
    expect(shown.placements.map((p: any) => p.rack[0]).slice(0, 2)).toEqual(['rack-111', 'rack-121'])
    expect((await ok(['audit', ...local])).stdout).toContain('No findings')
    // The rack move, done on plain Placement (which checks nothing), is reported by audit.
    await ok(['topology', 'apply', files.moved, '--previous', files.layout, ...e.plain])
    const audit = await run(['audit', '--exit-code', '--groups', groups, '--layout', files.moved, ...e.plain])
    expect(audit.code, audit.stderr).toBe(7)
    expect(audit.stdout).toContain('2 members in row row-11 (at most 1)')
  })
})
