/**
 * Where placement groups and claims used to let things through, on the real binary, on a file
 * (--db) and on a daemon (and on plain Placement where it applies):
 *  - a host outside the topology took members of a full hard anti-affinity-by-row group, and
 *    group show and audit saw nothing; a topology apply leaving a member's host out did the same;
 *  - claiming an existing member without --group skipped its group's rule;
 *  - an empty answer said nothing of why.
 *
 * The cloud: cn-1 in row-1, cn-2 in row-2, cn-4 (disabled) in row-3, cn-3 in no rack, row or
 * room; 16 VCPU each.
 */
import fs from 'node:fs'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import YAML from 'yaml'
import {placemat as run, type Result} from '../helpers/db-tools.js'
import {startEndpoints, stopEndpoints, type Endpoints} from '../helpers/endpoints.js'

const C = (i: number) => `66666666-0000-4000-8000-${String(i).padStart(12, '0')}`
const OWN = ['--project', 'p', '--user', 'u']

async function ok(args: string[]): Promise<Result> {
  const r = await run(args)
  expect(r.code, `placemat ${args.join(' ')}\n${r.stderr}\n${r.stdout.slice(0, 2000)}`).toBe(0)
  return r
}

const layout = (rows: number[]) => ({
  rows: rows.map((i) => ({name: `row-${i}`, racks: [{name: `rack-${i}`, hosts: [`cn-${i === 3 ? 4 : i}`]}]})),
})

describe('placement group edges on the command line', () => {
  let e: Endpoints
  const files = {cloud: '', layout: '', without2: ''}
  beforeAll(async () => {
    e = await startEndpoints('placemat-cli-group-edges-')
    files.cloud = path.join(e.dir, 'cloud.yaml')
    files.layout = path.join(e.dir, 'layout.yaml')
    files.without2 = path.join(e.dir, 'without-2.yaml')
    fs.writeFileSync(files.cloud, YAML.stringify({providers: [1, 2, 3, 4].map((i) => ({name: `cn-${i}`, inventories: {VCPU: 16}}))}))
    fs.writeFileSync(files.layout, YAML.stringify(layout([1, 2, 3])))
    fs.writeFileSync(files.without2, YAML.stringify(layout([1, 3])))
    await ok(['db', 'init', '--db', path.join(e.dir, 'g.db')])
  })
  afterAll(() => stopEndpoints(e))

  const targets = () => [
    {what: 'a file', args: ['--db', path.join(e.dir, 'g.db')]},
    {what: 'a daemon', args: e.daemon},
  ]

  async function cloudIn(args: string[]) {
    await ok(['apply', files.cloud, ...args])
    await ok(['topology', 'apply', files.layout, ...args])
    await ok(['provider', 'trait', 'set', 'cn-4', 'COMPUTE_STATUS_DISABLED', ...args])
  }

  it('a hard rule by row is not kept on a host outside the topology: refused there, shown and audited when forced', async () => {
    await Promise.all(
      targets().map(async ({what, args}) => {
        await cloudIn(args)
        await ok(['group', 'create', 'web', '--policy', 'anti-affinity', '--level', 'row', ...args])
        await ok(['claim', C(1), '--group', 'web', '--resources', 'VCPU:1', ...OWN, ...args])
        await ok(['claim', C(2), '--group', 'web', '--resources', 'VCPU:1', ...OWN, ...args])
        // row-1 and row-2 hold members, row-3's host is disabled: only cn-3, outside the topology, is left.
        const third = await run(['claim', C(3), '--group', 'web', '--resources', 'VCPU:1', ...OWN, ...args])
        expect(third.code, what).toBe(4)
        expect(third.stderr, what).toBe(
          'placemat: no allocation candidates for this request: 3 hosts fit; the anti-affinity rule of group web (by row) excludes them (1 of them outside the topology, in no row)\n',
        )
        // A consumer already on cn-3 joining the group is refused, and forced, shown and audited.
        await ok(['claim', C(9), '--resources', 'VCPU:1', '--in-tree', 'cn-3', ...OWN, ...args])
        const join = await run(['group', 'add', 'web', C(9), ...args])
        expect(join.code, what).toBe(4)
        expect(join.stderr, what).toContain(
          `group web (anti-affinity by row): a member is on host cn-3, in no row: outside the topology, where a rule by row cannot be kept [(outside the topology): ${C(9)}]`,
        )
        await ok(['group', 'add', 'web', C(9), '--allow-violations', ...args])
        const shown = (await ok(['group', 'show', 'web', ...args])).stdout
        expect(shown, what).toContain('Broken: group web (anti-affinity by row): a member is on host cn-3, in no row: outside the topology')
        expect(shown, what).toContain('! row (none), outside the topology (1 member)')
        const audit = await run(['audit', '--exit-code', ...args])
        expect(audit.code, what).toBe(7)
        expect(audit.stdout, what).toMatch(
          /group\s+web \(anti-affinity by row\)\s+a member is on host cn-3, in no row: outside the topology/,
        )
        await ok(['group', 'remove', 'web', C(9), ...args])
        // A layout that leaves C2's host out of the topology is refused as the dry run says.
        const pruned = await run(['topology', 'apply', files.without2, '--prune', ...args])
        expect(pruned.code, what).toBe(4)
        expect(pruned.stderr, what).toContain('a member is on host cn-2, in no row: outside the topology')
        expect((await ok(['audit', ...args])).stdout, what).toContain('No findings')
      }),
    )
  })

  it("claim of an existing member without --group keeps its group's rule", async () => {
    await Promise.all(
      targets().map(async ({what, args}) => {
        // C2 (row-2) asked into row-1, where C1 is.
        const moved = await run(['claim', C(2), '--replace', '--resources', 'VCPU:1', '--member-of', 'row:row-1', ...args])
        expect(moved.code, what).toBe(4)
        expect(moved.stderr, what).toBe(
          'placemat: no allocation candidates for this request: 1 host fits; the anti-affinity rule of group web (by row) excludes it\n',
        )
        // Within its own row it moves; allowed to break the rule, it goes.
        await ok(['claim', C(2), '--replace', '--resources', 'VCPU:2', ...args])
        expect((await ok(['group', 'show', 'web', ...args])).stdout, what).toContain('The rule holds.')
        await ok(['claim', C(2), '--replace', '--resources', 'VCPU:1', '--member-of', 'row:row-1', '--allow-violations', ...args])
        expect((await ok(['group', 'show', 'web', ...args])).stdout, what).toContain('2 members in row row-1 (at most 1)')
      }),
    )
  })

  it('an empty answer says which part of the request emptied it; exit codes stay', async () => {
    await Promise.all(
      [...targets(), {what: 'plain Placement', args: e.plain}].map(async ({what, args}) => {
        if (what === 'plain Placement') await cloudIn(args)
        const big = await run(['candidates', '--resources', 'VCPU:64', ...args])
        expect(big.code, what).toBe(0)
        expect(big.stderr, what).toMatch(/^placemat: no candidates: no provider has 64 VCPU free \(the most free: cn-\d with 1[56]\)\n$/)
        const trait = await run(['candidates', '--resources', 'VCPU:1', '--required', 'HW_CPU_X86_AVX512F', '--json', ...args])
        expect(trait.code, what).toBe(0)
        expect(JSON.parse(trait.stdout).allocation_requests, what).toEqual([])
        expect(trait.stderr, what).toBe('placemat: no candidates: 4 hosts have the resources; none has HW_CPU_X86_AVX512F\n')
        const disabled = await run([
          'claim',
          C(20),
          '--resources',
          'VCPU:1',
          '--member-of',
          'rack:rack-3',
          ...OWN,
          ...args,
          ...(what === 'plain Placement' ? ['--layout', files.layout] : []),
        ])
        expect(disabled.code, what).toBe(4)
        expect(disabled.stderr, what).toBe(
          'placemat: no allocation candidates for this request: 1 host fits; it is disabled (--include-disabled to use it)\n',
        )
      }),
    )
  })
})
