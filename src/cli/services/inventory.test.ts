/**
 * An inventory change as the command line takes it (no process, no HTTP): CLASS=TOTAL and
 * CLASS:FIELD=VALUE arguments with field flags for every class named, laid over what is there
 * with --amend or replacing it without, and the rows a table shows.
 */
import {describe, expect, it} from 'vitest'
import {exitCodeOf} from '../failure.js'
import {collectChanges, inventoryRows, mergeInventories} from './inventory.js'

const said = (f: () => unknown) => {
  try {
    f()
    return 'taken'
  } catch (err) {
    return `${exitCodeOf(err)} ${(err as Error).message}`
  }
}

describe('inventory changes', () => {
  it('takes fields from arguments and from flags, a bare flag value for every class named', () => {
    const {perClass} = collectChanges(['VCPU=8', 'MEMORY_MB=4096', 'VCPU:reserved=1'], {
      allocation_ratio: ['2'],
      max_unit: ['MEMORY_MB=2048'],
    })
    expect(Object.fromEntries(perClass)).toEqual({
      VCPU: {total: 8, reserved: 1, allocation_ratio: 2},
      MEMORY_MB: {total: 4096, allocation_ratio: 2, max_unit: 2048},
    })
  })

  it('echoes a number out of range as it was typed, not rounded', () => {
    expect(said(() => collectChanges(['VCPU=99999999999999999999'], {}))).toBe(
      '2 VCPU=99999999999999999999: total must be 1 to 2147483647, not 99999999999999999999',
    )
  })

  it('refuses a bare flag value when no class is named, and a field it does not know (exit 2)', () => {
    expect(said(() => collectChanges([], {reserved: ['1']}))).toBe('2 --reserved 1: name the class (CLASS=1) or give classes as arguments')
    expect(said(() => collectChanges(['VCPU:size=1'], {}))).toMatch(/^2 'VCPU:size=1': unknown inventory field 'size'/)
  })

  it('replaces the inventories with the classes named, or with --amend lays the change over each field there', () => {
    const current = {VCPU: {total: 8, reserved: 1}, DISK_GB: {total: 100}}
    const change = collectChanges(['VCPU:reserved=2'], {})
    expect(mergeInventories(current, change, true)).toEqual({VCPU: {total: 8, reserved: 2}, DISK_GB: {total: 100}})
    expect(said(() => mergeInventories(current, change, false))).toBe(
      '2 VCPU: give its total (VCPU=TOTAL), or use --amend to change fields of an existing inventory',
    )
    expect(mergeInventories(current, collectChanges(['VCPU=16'], {}), false)).toEqual({VCPU: {total: 16}})
  })

  it("shows each class with what is used of it and its capacity, the fields left out at Placement's defaults", () => {
    expect(inventoryRows({VCPU: {total: 8, reserved: 2, allocation_ratio: 4}}, {VCPU: 3})).toEqual([
      {resource_class: 'VCPU', total: 8, reserved: 2, allocation_ratio: 4, used: 3, capacity: 24},
    ])
  })
})
