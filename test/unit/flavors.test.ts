/** Nova's request for a flavor, and the flavor files osc prints. */
import {describe, expect, it} from 'vitest'
import {flavorRequest, type Flavor} from '../../src/core/headroom/flavors.js'
import {flavorOfValue, parseFlavors} from '../../src/core/headroom/flavor-file.js'

const flavor = (over: Partial<Flavor>): Flavor => ({
  name: 'f',
  vcpus: 2,
  ram: 4096,
  disk: 20,
  ephemeral: 0,
  swap: 0,
  properties: {},
  ...over,
})
const groups = (f: Flavor) =>
  Object.fromEntries(
    flavorRequest(f).request.groups.map((g) => [
      g.suffix,
      {resources: Object.fromEntries(g.resources), required: g.requiredTraits, forbidden: [...g.forbiddenTraits]},
    ]),
  )

describe('a flavor as Nova asks Placement for it', () => {
  it('asks VCPU, MEMORY_MB and DISK_GB = disk + ephemeral + swap rounded up to GB', () => {
    expect(groups(flavor({disk: 20, ephemeral: 5, swap: 1025}))).toEqual({
      '': {resources: {VCPU: 2, MEMORY_MB: 4096, DISK_GB: 27}, required: [], forbidden: []},
    })
  })

  it('leaves out a class asked 0, and lets resources:CLASS=N set or drop one', () => {
    expect(groups(flavor({disk: 0}))['']!.resources).toEqual({VCPU: 2, MEMORY_MB: 4096})
    expect(
      groups(
        flavor({
          properties: {'resources:VCPU': '0', 'resources:MEMORY_MB': '0', 'resources:DISK_GB': '0', 'resources:CUSTOM_BAREMETAL_GOLD': '1'},
        }),
      )['']!.resources,
    ).toEqual({CUSTOM_BAREMETAL_GOLD: 1})
    expect(groups(flavor({properties: {'resources:MEMORY_MB': '1024'}}))['']!.resources).toEqual({VCPU: 2, MEMORY_MB: 1024, DISK_GB: 20})
  })

  it('asks PCPU for dedicated CPUs, one more with isolated emulator threads', () => {
    expect(groups(flavor({properties: {'hw:cpu_policy': 'dedicated'}}))['']!.resources).toEqual({PCPU: 2, MEMORY_MB: 4096, DISK_GB: 20})
    expect(groups(flavor({properties: {'hw:cpu_policy': 'dedicated', 'hw:emulator_threads_policy': 'isolate'}}))['']!.resources.PCPU).toBe(
      3,
    )
  })

  it('makes granular groups, traits and the group policy', () => {
    const r = flavorRequest(
      flavor({
        properties: {
          'resources1:VGPU': '1',
          'trait1:CUSTOM_A': 'required',
          'resources2:VGPU': '1',
          'trait:HW_CPU_X86_AVX2': 'required',
          'trait:CUSTOM_SLOW': 'forbidden',
          group_policy: 'isolate',
        },
      }),
    )
    expect(r.request.groupPolicy).toBe('isolate')
    expect(Object.fromEntries(r.request.groups.map((g) => [g.suffix, Object.fromEntries(g.resources)]))).toEqual({
      '': {VCPU: 2, MEMORY_MB: 4096, DISK_GB: 20},
      '1': {VGPU: 1},
      '2': {VGPU: 1},
    })
    expect(groups(flavor({properties: {'trait:HW_CPU_X86_AVX2': 'required', 'trait:CUSTOM_SLOW': 'forbidden'}}))['']).toMatchObject({
      required: [['HW_CPU_X86_AVX2']],
      forbidden: ['CUSTOM_SLOW'],
    })
    expect(r.warnings).toEqual([])
  })

  it('names every extra spec it does not model', () => {
    const r = flavorRequest(
      flavor({
        properties: {
          'hw:numa_nodes': '1',
          'quota:disk_read_bytes_sec': '10',
          'aggregate_instance_extra_specs:ssd': 'true',
          'resources:VCPU': 'many',
          'trait:X': 'preferred',
        },
      }),
    )
    expect(r.warnings).toEqual([
      'hw:numa_nodes: judged by Nova outside Placement, not modelled',
      'quota:disk_read_bytes_sec: judged by Nova outside Placement, not modelled',
      'aggregate_instance_extra_specs:ssd: judged by Nova outside Placement, not modelled',
      'resources:VCPU=many: not a whole amount, left out',
      'trait:X=preferred: a trait is required or forbidden, left out',
    ])
  })
})

describe('a flavor file', () => {
  it("reads osc's flavor list --long and flavor show JSON, and a YAML list", () => {
    const list = parseFlavors(
      JSON.stringify([
        {
          ID: '1',
          Name: 'a',
          RAM: 512,
          Disk: 1,
          Ephemeral: 0,
          VCPUs: 1,
          'Is Public': true,
          Swap: '',
          'RXTX Factor': 1,
          Properties: "hw:cpu_policy='dedicated', resources:VGPU='1'",
        },
      ]),
      'f.json',
    )
    expect(list).toEqual([
      {
        name: 'a',
        vcpus: 1,
        ram: 512,
        disk: 1,
        ephemeral: 0,
        swap: 0,
        properties: {'hw:cpu_policy': 'dedicated', 'resources:VGPU': '1'},
        memberOf: undefined,
      },
    ])
    const show = parseFlavors(
      JSON.stringify({
        name: 'b',
        ram: 1024,
        disk: 10,
        vcpus: 2,
        swap: 512,
        'OS-FLV-EXT-DATA:ephemeral': 5,
        properties: {'trait:X': 'required'},
      }),
      'show.json',
    )
    expect(show[0]).toMatchObject({name: 'b', ephemeral: 5, swap: 512, properties: {'trait:X': 'required'}})
    const yaml = parseFlavors('- name: c\n  vcpus: 1\n  ram: 256\n  member_of: ["in:a1,a2"]\n', 'f.yaml')
    expect(yaml[0]).toMatchObject({name: 'c', disk: 0, memberOf: [['a1', 'a2']]})
  })

  it('refuses what does not parse with its line and column, and a flavor without its sizes', () => {
    expect(() => parseFlavors('[{"Name": "a",\n  "RAM": }]', 'f.json')).toThrow(/^f\.json:2:\d+: /)
    expect(() => parseFlavors('- name: a\n  ram: 1\n', 'f.yaml')).toThrow(
      'f.yaml: flavor a: VCPUs must be a whole number >= 0, not undefined',
    )
    expect(() => parseFlavors('- name: a\n  vcpus: 1\n  ram: 1\n- name: a\n  vcpus: 1\n  ram: 1\n', 'f.yaml')).toThrow(
      'flavor a is given twice',
    )
  })
  it('reads one flavor given as a value (an API body’s) as an entry of the file, named by where it is', () => {
    expect(flavorOfValue({Name: 'a', VCPUs: 2, RAM: 512, Swap: '', Properties: "hw:cpu_policy='dedicated'"}, 'flavor')).toEqual({
      name: 'a',
      vcpus: 2,
      ram: 512,
      disk: 0,
      ephemeral: 0,
      swap: 0,
      properties: {'hw:cpu_policy': 'dedicated'},
      memberOf: undefined,
    })
    expect(() => flavorOfValue({name: 'a', vcpus: 1, ram: -1}, 'flavor')).toThrow(/^flavor a: RAM must be a whole number >= 0, not -1$/)
    expect(() => flavorOfValue({vcpus: 1, ram: 1}, 'flavor')).toThrow(/^flavor: no name$/)
    expect(() => flavorOfValue('a', 'flavor')).toThrow(/^flavor: an object expected$/)
  })
})
