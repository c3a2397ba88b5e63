/**
 * Hosts taken out of service (COMPUTE_STATUS_DISABLED, the trait nova sets on a disabled compute
 * service) get no new work from `candidates` and `claim`, as nova's scheduler gives them none,
 * unless --include-disabled asks for them.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {withoutDisabledHosts} from '../../src/cli/candidates/query.js'
import {placemat} from '../helpers/cli.js'

describe('disabled hosts', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-disabled-'))
  const db = ['--db', path.join(dir, 'p.db')]
  const env = {env: {PLACEMAT_HOME: dir}}
  const ok = async (args: string[]) => {
    const r = await placemat([...args, ...db], env)
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0)
    return r.stdout
  }
  const names = new Map<string, string>()
  /** The hosts the candidates (GET /allocation_candidates's body) are on, by name. */
  const hosts = (out: string) =>
    [...new Set(JSON.parse(out).allocation_requests.flatMap((r: any) => Object.keys(r.allocations).map((u) => names.get(u))))].sort()
  beforeAll(async () => {
    await ok(['db', 'init'])
    for (const h of ['h1', 'h2']) {
      await ok(['provider', 'create', h])
      await ok(['inventory', 'set', h, 'VCPU=8'])
      names.set(JSON.parse(await ok(['provider', 'show', h, '--json'])).uuid, h)
    }
    await ok(['provider', 'trait', 'set', 'h1', 'COMPUTE_STATUS_DISABLED'])
  })
  afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

  it('are left out of candidates and claims unless --include-disabled', async () => {
    expect(hosts(await ok(['candidates', '--resources', 'VCPU:1', '--json']))).toEqual(['h2'])
    expect(hosts(await ok(['candidates', '--resources', 'VCPU:1', '--include-disabled', '--json']))).toEqual(['h1', 'h2'])
    for (let i = 1; i <= 3; i++) {
      const claimed = await ok([
        'claim',
        `c0000000-0000-4000-8000-00000000000${i}`,
        '--resources',
        'VCPU:2',
        '--project',
        'p',
        '--user',
        'u',
        '--json',
      ])
      const h1 = [...names].find(([, n]) => n === 'h1')![0]
      expect(claimed).not.toContain(h1)
    }
    // h2 is full (3 x 2 of 8 leaves 2): one more of 4 fits only on the disabled host, and is refused.
    const full = await placemat(
      ['claim', 'c0000000-0000-4000-8000-000000000009', '--resources', 'VCPU:4', '--project', 'p', '--user', 'u', ...db],
      env,
    )
    expect(full.code).not.toBe(0)
  })

  it('the request says it with root_required (1.35+), beside what it already says', () => {
    expect(withoutDisabledHosts(undefined, false, 'latest')).toBe('!COMPUTE_STATUS_DISABLED')
    expect(withoutDisabledHosts('HW_CPU_X86_AVX2', false, '1.39')).toBe('HW_CPU_X86_AVX2,!COMPUTE_STATUS_DISABLED')
    expect(withoutDisabledHosts('COMPUTE_STATUS_DISABLED', false, 'latest')).toBe('COMPUTE_STATUS_DISABLED')
    expect(withoutDisabledHosts(undefined, true, 'latest')).toBeUndefined()
    expect(withoutDisabledHosts(undefined, false, '1.34')).toBeUndefined()
  })
})
