/**
 * An osc-placement script with `openstack resource provider` written `placemat provider`: the
 * commands and output flags of osc-placement's documentation (`-c` repeated, osc's column names,
 * which are the JSON keys, `-c` with `-f json|yaml`, `--resource CLASS=N`) run and print what
 * osc prints.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import YAML from 'yaml'
import {placemat, type Result} from '../helpers/cli.js'

const ok = (r: Result) => {
  expect(r.code, r.stderr).toBe(0)
  return r.stdout
}

let dir: string
let db: string[]
let uuid: (name: string) => Promise<string>
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-osc-'))
  db = ['--db', path.join(dir, 'cloud.db')]
  fs.writeFileSync(
    path.join(dir, 'cloud.yaml'),
    `providers:
  - name: cn-1
    inventories: {VCPU: 8, MEMORY_MB: 4096}
    children: [{name: cn-1_numa0, inventories: {VCPU: 2}}]
  - {name: cn-2, inventories: {VCPU: 1}}
`,
  )
  ok(await placemat(['db', 'init', ...db]))
  ok(await placemat(['apply', path.join(dir, 'cloud.yaml'), ...db]))
  uuid = async (name) => ok(await placemat(['provider', 'show', name, '-f', 'value', '-c', 'uuid', ...db])).trim()
}, 60_000)
afterAll(() => {
  if (dir) fs.rmSync(dir, {recursive: true, force: true})
})

describe("osc-placement's scripting habits", () => {
  it('-c repeated, in the order given', async () => {
    const lines = ok(await placemat(['provider', 'list', '-c', 'name', '-c', 'uuid', '-f', 'value', ...db]))
      .trim()
      .split('\n')
    expect(lines.map((l) => l.split(' ')[0])).toEqual(['cn-1', 'cn-1_numa0', 'cn-2'])
    expect(lines[0].split(' ')[1]).toBe(await uuid('cn-1'))
  })

  it("osc's column names: root_provider_uuid and parent_provider_uuid", async () => {
    const out = ok(
      await placemat([
        'provider',
        'list',
        '--name',
        'cn-1_numa0',
        '-c',
        'root_provider_uuid',
        '-c',
        'parent_provider_uuid',
        '-f',
        'value',
        ...db,
      ]),
    )
    const root = await uuid('cn-1')
    expect(out.trim()).toBe(`${root} ${root}`)
  })

  it('-c with -f json or yaml prints only those keys, a list for a list', async () => {
    const listed = JSON.parse(ok(await placemat(['provider', 'list', '-f', 'json', '-c', 'uuid', '-c', 'name', ...db])))
    expect(listed).toEqual([
      {uuid: await uuid('cn-1'), name: 'cn-1'},
      {uuid: await uuid('cn-1_numa0'), name: 'cn-1_numa0'},
      {uuid: await uuid('cn-2'), name: 'cn-2'},
    ])
    expect(YAML.parse(ok(await placemat(['provider', 'list', '-f', 'yaml', '-c', 'name', '--name', 'cn-2', ...db])))).toEqual([
      {name: 'cn-2'},
    ])
    const shown = JSON.parse(ok(await placemat(['provider', 'show', 'cn-2', '-f', 'json', '-c', 'name', '-c', 'generation', ...db])))
    expect(shown).toEqual({name: 'cn-2', generation: expect.any(Number)})
  })

  it('provider list --resource CLASS=N, repeatable', async () => {
    const names = async (...args: string[]) =>
      ok(await placemat(['provider', 'list', ...args, '-c', 'name', '-f', 'value', ...db]))
        .trim()
        .split('\n')
    expect(await names('--resource', 'VCPU=2')).toEqual(['cn-1', 'cn-1_numa0'])
    expect(await names('--resource', 'VCPU=2', '--resource', 'MEMORY_MB=1024')).toEqual(['cn-1'])
    const bad = await placemat(['provider', 'list', '--resource', 'VCPU:2', ...db])
    expect([bad.code, bad.stderr]).toEqual([2, 'placemat: --resource VCPU:2: CLASS=N expected\n'])
  })
})
