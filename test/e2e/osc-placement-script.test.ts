/**
 * An osc-placement script with `openstack resource provider` written `placemat provider` (and
 * `openstack resource class` `placemat class`, `openstack trait` `placemat trait`, `openstack
 * allocation candidate list` `placemat allocation candidate list`, `openstack resource usage
 * show` `placemat usage total`): osc-placement's documented commands with osc's arguments and
 * flags, run by /bin/sh with `set -e` and `placemat` on PATH, on a SQLite file. What it prints
 * is what osc prints with `-f value`, `-f json` and `-c` (each -c list in osc's column order:
 * cliff prints the columns asked for in the command's own order).
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {execFile} from 'node:child_process'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {BIN, childEnv, placemat} from '../helpers/cli.js'

const SCRIPT = `#!/bin/sh
set -e
CN1=6f1d6e3c-1d2b-4c8a-9b5e-2a7f0c3d9e11
NUMA=0b4f3a2e-8c7d-4e6f-a5b4-c3d2e1f0a9b8
AGG1=0a7a5ee4-3f0c-4b4e-9b1d-2a0f3c1ee8d1
AGG2=5f1c2c4e-1111-4e9e-a1b1-8d1c7f0e2a10
VM=9a1f2b0c-6c3e-4f1e-8b7e-2d4c6a8e0f13
PROJECT=6c8d1e9b2c6f4b5e8a1d3f7c9b2e4a6d
USER_ID=3e2d1c0b9a8f4e7d6c5b4a3f2e1d0c9b

placemat class set CUSTOM_FPGA

echo '# provider create, set'
placemat provider create cn1 --uuid $CN1 -f value -c uuid
placemat provider create cn1_numa0 --uuid $NUMA --parent-provider $CN1 -f value -c name
placemat provider set $NUMA --name cn1_numa1 --parent-provider $CN1 -f value -c name -c parent_provider_uuid

echo '# provider inventory set, class set, delete, list, show'
placemat provider inventory set $CN1 --resource VCPU=8 --resource VCPU:allocation_ratio=16 --resource DISK_GB=100 \\
  --resource MEMORY_MB=4096 --resource MEMORY_MB:step_size=128 -f value -c resource_class -c step_size -c total
placemat provider inventory class set $NUMA VCPU --total 4 --max_unit 2 --reserved 1 -f json -c max_unit -c reserved -c total
placemat provider inventory delete $CN1 --resource-class DISK_GB
placemat provider inventory list $CN1 -f value -c resource_class -c total -c used
placemat provider inventory show $CN1 VCPU -f json -c total -c used

echo '# provider trait set, list, delete; provider list --forbidden'
placemat provider trait set $CN1 --trait HW_CPU_X86_AVX2 -f value
placemat provider list --forbidden HW_CPU_X86_AVX2 -f value -c name
placemat provider trait delete $CN1
placemat provider trait list $CN1 -f value

echo '# provider aggregate set, list; provider list --member-of'
GENERATION=$(placemat provider show $CN1 -f value -c generation)
placemat provider aggregate set $CN1 --aggregate $AGG1 --aggregate $AGG2 --generation $GENERATION -f value -c uuid
placemat provider aggregate list $CN1 -f value -c uuid
placemat provider list --member-of $AGG2,$NUMA -f value -c name

echo '# provider allocation set, show, unset, delete; usage'
placemat provider allocation set $VM --allocation rp=$CN1,VCPU=2,MEMORY_MB=512 \\
  --project-id $PROJECT --user-id $USER_ID -f value -c resource_provider -c project_id
placemat provider allocation show $VM -f json -c resource_provider -c user_id
placemat provider usage show $CN1 -f value -c resource_class -c usage
placemat usage total $PROJECT --user-id $USER_ID -f value -c resource_class -c usage
placemat allocation candidate list --resource VCPU=1 --resource MEMORY_MB=128 --limit 5 --ids
placemat provider allocation unset $VM --resource-class MEMORY_MB -f value -c resource_provider
placemat provider allocation delete $VM

echo '# provider inventory delete (all of it), provider delete'
placemat provider inventory delete $NUMA
placemat provider inventory list $NUMA -f value
placemat provider delete $NUMA
placemat provider delete $CN1
echo done
`

/** What osc prints, but for placemat's own `--ids` on candidates (osc's rows are a provider of a candidate each). */
const EXPECTED = `# provider create, set
6f1d6e3c-1d2b-4c8a-9b5e-2a7f0c3d9e11
cn1_numa0
cn1_numa1
6f1d6e3c-1d2b-4c8a-9b5e-2a7f0c3d9e11
# provider inventory set, class set, delete, list, show
VCPU 1 8
DISK_GB 1 100
MEMORY_MB 128 4096
{
  "max_unit": 2,
  "reserved": 1,
  "total": 4
}
VCPU 8 0
MEMORY_MB 4096 0
{
  "total": 8,
  "used": 0
}
# provider trait set, list, delete; provider list --forbidden
HW_CPU_X86_AVX2
cn1_numa1
# provider aggregate set, list; provider list --member-of
0a7a5ee4-3f0c-4b4e-9b1d-2a0f3c1ee8d1
5f1c2c4e-1111-4e9e-a1b1-8d1c7f0e2a10
0a7a5ee4-3f0c-4b4e-9b1d-2a0f3c1ee8d1
5f1c2c4e-1111-4e9e-a1b1-8d1c7f0e2a10
cn1
# provider allocation set, show, unset, delete; usage
6f1d6e3c-1d2b-4c8a-9b5e-2a7f0c3d9e11 6c8d1e9b2c6f4b5e8a1d3f7c9b2e4a6d
[
  {
    "resource_provider": "6f1d6e3c-1d2b-4c8a-9b5e-2a7f0c3d9e11",
    "user_id": "3e2d1c0b9a8f4e7d6c5b4a3f2e1d0c9b"
  }
]
VCPU 2
MEMORY_MB 512
VCPU 2
MEMORY_MB 512
6f1d6e3c-1d2b-4c8a-9b5e-2a7f0c3d9e11
0b4f3a2e-8c7d-4e6f-a5b4-c3d2e1f0a9b8 6f1d6e3c-1d2b-4c8a-9b5e-2a7f0c3d9e11
6f1d6e3c-1d2b-4c8a-9b5e-2a7f0c3d9e11
# provider inventory delete (all of it), provider delete
done
`

let dir: string
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-osc-script-'))
  // `placemat` on PATH is the built CLI, as an installed one would be; node beside it for its #! line.
  fs.mkdirSync(path.join(dir, 'bin'))
  fs.symlinkSync(BIN, path.join(dir, 'bin', 'placemat'))
  fs.writeFileSync(path.join(dir, 'placement.sh'), SCRIPT)
})
afterAll(() => {
  if (dir) fs.rmSync(dir, {recursive: true, force: true})
})

describe('an osc-placement script, with `openstack resource provider` written `placemat provider`', () => {
  it('runs under set -e and prints what osc prints', async () => {
    const db = path.join(dir, 'placement.db')
    const init = await placemat(['db', 'init', '--db', db])
    expect(init.code, init.stderr).toBe(0)
    const env = childEnv({PLACEMAT_DB: db, PATH: [path.join(dir, 'bin'), path.dirname(process.execPath), process.env.PATH].join(':')})
    const run = await new Promise<{code: number | null; stdout: string; stderr: string}>((resolve) =>
      execFile('/bin/sh', [path.join(dir, 'placement.sh')], {cwd: dir, env}, (err, stdout, stderr) =>
        resolve({code: err ? ((err as {code?: number}).code ?? 1) : 0, stdout, stderr}),
      ),
    )
    expect({code: run.code, stderr: run.stderr}).toEqual({code: 0, stderr: ''})
    expect(run.stdout).toBe(EXPECTED)
  }, 120_000)
})
