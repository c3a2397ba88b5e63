/**
 * What listings are ordered by and what they count, decided by what things are and never by
 * when they were written; and how the command line says what is wrong before it asks anyone.
 */
import {describe, expect, it} from 'vitest'
import {ApiError} from '../../src/client/client.js'
import {messageOf} from '../../src/cli/failure.js'
import {formatResources} from '../../src/cli/render/resources.js'
import {parseResourceArg} from '../../src/cli/services/inventory.js'
import {listedAggregates} from '../../src/core/aggregate-names.js'
import {inventoryFieldProblem} from '../../src/core/placement/inventories.js'
import {compareNamed, compareResourceClasses} from '../../src/core/listing-order.js'
import {usageTotalRows} from '../../src/core/placement/usages.js'

describe('listing order', () => {
  it('resource classes: VCPU, PCPU, MEMORY_MB, DISK_GB, then by name; a RESOURCES cell in that order whatever order it was written in', () => {
    expect(['VGPU', 'DISK_GB', 'CUSTOM_B', 'MEMORY_MB', 'CUSTOM_A', 'VCPU', 'PCPU'].sort(compareResourceClasses)).toEqual([
      'VCPU',
      'PCPU',
      'MEMORY_MB',
      'DISK_GB',
      'CUSTOM_A',
      'CUSTOM_B',
      'VGPU',
    ])
    expect(formatResources({VGPU: 1, DISK_GB: 10, MEMORY_MB: 1024, VCPU: 2})).toBe('VCPU=2,MEMORY_MB=1024,DISK_GB=10,VGPU=1')
    expect(formatResources({MEMORY_MB: 1024, VCPU: 2})).toBe(formatResources({VCPU: 2, MEMORY_MB: 1024}))
  })

  it('providers by name, then uuid', () => {
    const ps = [
      {name: 'cn-02', uuid: 'b'},
      {name: 'aaa', uuid: 'z'},
      {name: 'cn-01', uuid: 'c'},
      {name: 'cn-01', uuid: 'a'},
    ]
    expect([...ps].sort(compareNamed).map((p) => `${p.name}/${p.uuid}`)).toEqual(['aaa/z', 'cn-01/a', 'cn-01/c', 'cn-02/b'])
  })

  it("a provider's aggregates: named ones by name, then racks, rows and rooms, then the unnamed by uuid, whatever order it was given them in", () => {
    const named = [
      {uuid: 'u-room', name: 'm1', level: 'room' as const},
      {uuid: 'u-rack', name: 'k1', level: 'rack' as const},
      {uuid: 'u-row', name: 'r1', level: 'row' as const},
      {uuid: 'u-fast', name: 'fast-net', level: null},
      {uuid: 'u-ceph', name: 'ceph-a', level: null},
    ]
    const given = ['u-z', 'u-row', 'u-fast', 'u-room', 'u-a', 'u-rack', 'u-ceph']
    const expected = [
      {uuid: 'u-ceph', label: 'ceph-a'},
      {uuid: 'u-fast', label: 'fast-net'},
      {uuid: 'u-rack', label: 'rack k1'},
      {uuid: 'u-row', label: 'row r1'},
      {uuid: 'u-room', label: 'room m1'},
      {uuid: 'u-a', label: null},
      {uuid: 'u-z', label: null},
    ]
    expect(listedAggregates(given, named)).toEqual(expected)
    expect(listedAggregates([...given].reverse(), named)).toEqual(expected)
    // Plain Placement: no names, by uuid.
    expect(listedAggregates(['b', 'a'], [])).toEqual([
      {uuid: 'a', label: null},
      {uuid: 'b', label: null},
    ])
  })
})

describe('usage total', () => {
  const holders = [
    ...[1, 2, 3].map(() => ({
      project_id: 'p',
      user_id: 'u1',
      consumer_type: 'INSTANCE',
      allocations: {cn: {resources: {VCPU: 1}}, gpu: {resources: {VGPU: 1}}},
    })),
    ...[4, 5].map(() => ({project_id: 'p', user_id: 'u1', consumer_type: 'INSTANCE', allocations: {cn: {resources: {VCPU: 1}}}})),
    {project_id: 'p', user_id: 'u2', consumer_type: 'unknown', allocations: {ceph: {resources: {DISK_GB: 5}}}},
  ]
  const usages = {unknown: {DISK_GB: 5, consumer_count: 1}, INSTANCE: {VGPU: 3, VCPU: 5, consumer_count: 5}}

  it('counts, on each line, the consumers of its type that hold its class; lines by type, then class', () => {
    expect(usageTotalRows(usages, {}, holders)).toEqual([
      {consumer_type: 'INSTANCE', resource_class: 'VCPU', usage: 5, consumer_count: 5},
      {consumer_type: 'INSTANCE', resource_class: 'VGPU', usage: 3, consumer_count: 3},
      {consumer_type: 'unknown', resource_class: 'DISK_GB', usage: 5, consumer_count: 1},
    ])
  })

  it('keeps the consumers GET /usages kept: its user, its consumer type ("all", "unknown", one type)', () => {
    expect(
      usageTotalRows({all: {VCPU: 5, VGPU: 3, consumer_count: 5}}, {consumerType: 'all', userId: 'u1'}, holders).map(
        (r) => r.consumer_count,
      ),
    ).toEqual([5, 3])
    expect(usageTotalRows({unknown: {DISK_GB: 5, consumer_count: 1}}, {consumerType: 'unknown'}, holders)[0].consumer_count).toBe(1)
    expect(
      usageTotalRows({INSTANCE: {VGPU: 3, consumer_count: 5}}, {consumerType: 'INSTANCE', userId: 'u2'}, holders)[0].consumer_count,
    ).toBe(0)
  })

  it('before 1.38: amounts per class, no counts', () => {
    expect(usageTotalRows({DISK_GB: 5, VCPU: 5}, {})).toEqual([
      {resource_class: 'VCPU', usage: 5},
      {resource_class: 'DISK_GB', usage: 5},
    ])
  })
})

describe('said before anything is asked', () => {
  it('an inventory value Placement would refuse', () => {
    expect(inventoryFieldProblem('total', -16)).toBe('total must be 1 to 2147483647, not -16')
    expect(inventoryFieldProblem('total', 0)).toBe('total must be 1 to 2147483647, not 0')
    expect(inventoryFieldProblem('reserved', 0)).toBeNull()
    expect(inventoryFieldProblem('max_unit', 2 ** 31)).toBe('max_unit must be 1 to 2147483647, not 2147483648')
    expect(inventoryFieldProblem('allocation_ratio', 1.5)).toBeNull()
    expect(() => parseResourceArg('VCPU=-16')).toThrow('VCPU=-16: total must be 1 to 2147483647, not -16')
    expect(parseResourceArg('VCPU:reserved=0')).toEqual({rc: 'VCPU', field: 'reserved', value: 0})
  })

  it('"not found" answered by the endpoint reads as the command line\'s own: no status in front', () => {
    expect(messageOf(new ApiError(404, "No placement group named 'nosuch'.", undefined, 'GET', '/placemat/v1/groups/nosuch'))).toBe(
      "No placement group named 'nosuch'.",
    )
    expect(messageOf(new ApiError(409, 'generation conflict', 'placement.concurrent_update', 'PUT', '/x'))).toBe(
      '409 [placement.concurrent_update]: generation conflict',
    )
    expect(messageOf(new ApiError(400, 'bad', undefined, 'PUT', '/x'))).toBe('400: bad')
  })
})
