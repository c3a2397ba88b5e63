/**
 * Today's standard traits (os-traits 3.9.0): a current nova-compute sets traits that 2.9.0
 * lacked; a new database has them, and the previous release's database gets them from `db
 * upgrade` (migration 0007). fixtures/db/schema-0006.db was made by that release: `db init`,
 * `provider create cn1`, `inventory set cn1 VCPU=16 MEMORY_MB=65536`, `provider trait set cn1
 * HW_CPU_X86_AVX2`.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {migrations} from '../../src/store/schema.js'
import {STANDARD_TRAITS, TRAITS_ADDED_SINCE_2_9_0} from '../../src/core/standard.js'
import {placemat, ROOT} from '../helpers/db-tools.js'

const PREVIOUS = path.join(ROOT, 'fixtures/db/schema-0006.db')
const NEW_TRAITS = ['COMPUTE_SOUND_MODEL_ICH9', 'HW_CPU_X86_AMXTILE', 'COMPUTE_ADDRESS_SPACE_EMULATED']

let dir: string
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-traits-'))
})
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

const ok = async (args: string[]) => {
  const r = await placemat(args, {env: {PLACEMAT_HOME: dir}})
  expect(r.code, `placemat ${args.join(' ')}: ${r.stderr}`).toBe(0)
  return r.stdout
}

/** cn1 takes the new traits, and the trait listing has all 377. */
async function takesNewTraits(file: string) {
  await ok(['provider', 'trait', 'set', 'cn1', 'HW_CPU_X86_AVX2', ...NEW_TRAITS, '--db', file])
  expect(JSON.parse(await ok(['provider', 'trait', 'list', 'cn1', '--db', file, '--json'])).traits.sort()).toEqual(
    ['HW_CPU_X86_AVX2', ...NEW_TRAITS].sort(),
  )
  const listed: string[] = JSON.parse(await ok(['trait', 'list', '--db', file, '--json'])).traits
  expect(listed.filter((t) => !t.startsWith('CUSTOM_')).sort()).toEqual([...STANDARD_TRAITS].sort())
}

describe("os-traits 3.9.0's standard traits", () => {
  it('are the 377 of os-traits 3.9.0, 32 more than 2.9.0', () => {
    expect(STANDARD_TRAITS).toHaveLength(377)
    expect(TRAITS_ADDED_SINCE_2_9_0).toHaveLength(32)
    for (const t of [...NEW_TRAITS, 'HW_CPU_X86_INTEL_TDX', 'HW_CPU_X86_AMD_SEV_SNP', 'COMPUTE_SECURITY_TPM_CRB', 'HW_PCI_LIVE_MIGRATABLE'])
      expect(STANDARD_TRAITS).toContain(t)
  })

  it('a provider of a new database takes them', async () => {
    const file = path.join(dir, 'new.db')
    await ok(['db', 'init', '--db', file])
    await ok(['provider', 'create', 'cn1', '--db', file])
    await takesNewTraits(file)
  })

  it("the previous release's database gets them from db upgrade, and keeps what it held", async () => {
    const file = path.join(dir, 'previous.db')
    fs.copyFileSync(PREVIOUS, file)
    const refused = await placemat(['provider', 'trait', 'set', 'cn1', ...NEW_TRAITS, '--db', file], {env: {PLACEMAT_HOME: dir}})
    expect(refused.code).not.toBe(0)
    const up = JSON.parse(await ok(['db', 'upgrade', '--db', file, '--json']))
    // Every migration after the release's last (0006), 0007 among them.
    expect(up.applied).toEqual(Object.keys(migrations).filter((m) => m > '0006_change_journal'))
    expect(up.applied).toContain('0007_os_traits_3_9_0')
    const raw = new SQLite(file, {readonly: true})
    const meta = Object.fromEntries(
      (
        raw.prepare("select key, value from placemat_meta where key in ('change_counter', 'journal_floor')").all() as Array<{
          key: string
          value: string
        }>
      ).map((r) => [r.key, Number(r.value)]),
    )
    raw.close()
    // Processes following the file load again: the traits came in outside the journal.
    expect(meta.journal_floor).toBe(meta.change_counter)
    const inventory = JSON.parse(await ok(['inventory', 'list', 'cn1', '--db', file, '--json']))
    expect(inventory.inventories.VCPU.total).toBe(16)
    await takesNewTraits(file)
  })
})
