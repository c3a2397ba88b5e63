import {describe, expect, it} from 'vitest'
import type {DomainHeadroom} from '../../core/headroom/headroom.js'
import {fitChanges} from '../../core/headroom/what-if-headroom.js'
import {table} from '../output.js'
import {amountText, bindingWord, lossTable, mixTable, summaryTable} from './summary.js'

const row = (level: DomainHeadroom['level'], name: string, flavor: string, fit: number, binding: string | null): DomainHeadroom => ({
  level,
  name,
  flavor,
  fit,
  pooled: fit,
  fragmentation_loss: 0,
  disabled_fit: 0,
  binding,
})

describe("capacity's summary", () => {
  it('puts flavors in columns, each cell the fit and what binds', () => {
    const domains = [
      row('room', 'room-1', 'm1.small', 816, 'VCPU'),
      row('cloud', 'cloud', 'm1.small', 816, 'VCPU'),
      row('room', 'room-1', 'e1.large', 59, 'DISK_GB@ceph-1'),
      row('cloud', 'cloud', 'e1.large', 119, 'DISK_GB@ceph-1'),
    ]
    const {rows, columns} = summaryTable(domains)
    expect(table(rows, columns).split('\n')).toEqual([
      'LEVEL  NAME    M1.SMALL         E1.LARGE',
      'room   room-1  816 vcpu   59 disk@ceph-1',
      'cloud  cloud   816 vcpu  119 disk@ceph-1',
    ])
  })

  it('shows a what-if as the fit after and its change, a domain lost among them', () => {
    const before = [row('rack', 'r1', 'f', 10, 'VCPU'), row('rack', 'r2', 'f', 7, 'MEMORY_MB')]
    const after = [row('rack', 'r2', 'f', 5, 'MEMORY_MB'), row('rack', 'r3', 'f', 4, 'VCPU')]
    const changes = fitChanges(before, after)
    expect(changes).toEqual([
      {level: 'rack', name: 'r1', flavor: 'f', before: 10, after: 0, change: -10},
      {level: 'rack', name: 'r2', flavor: 'f', before: 7, after: 5, change: -2},
      {level: 'rack', name: 'r3', flavor: 'f', before: 0, after: 4, change: 4},
    ])
    const {rows, columns} = summaryTable(after, changes)
    expect(table(rows, columns).split('\n')).toEqual([
      'LEVEL  NAME            F',
      'rack   r1        0 (-10)',
      'rack   r2     5 (-2) ram',
      'rack   r3    4 (+4) vcpu',
    ])
  })

  it('says amounts in the units a planner reads', () => {
    expect([amountText('MEMORY_MB', 3000), amountText('MEMORY_MB', 512), amountText('DISK_GB', 40), amountText('VCPU', 3)]).toEqual([
      '2.9 GiB',
      '512 MiB',
      '40 GB',
      '3',
    ])
    expect([bindingWord('MEMORY_MB'), bindingWord('DISK_GB@ceph-1'), bindingWord('CUSTOM_FPGA'), bindingWord(null)]).toEqual([
      'ram',
      'disk@ceph-1',
      'CUSTOM_FPGA',
      '',
    ])
  })

  it('shows a mix as a row per domain: its fit, then each flavor', () => {
    const {rows, columns} = mixTable({
      mix: [
        {flavor: 'large', weight: 2},
        {flavor: 'small', weight: 1},
      ],
      domains: [{level: 'cloud', name: 'cloud', fit: 30, by_flavor: {large: 20, small: 10}}],
    })
    expect(table(rows, columns).split('\n')).toEqual(['LEVEL  NAME   MIX FIT  LARGE  SMALL', 'cloud  cloud       30     20     10'])
  })

  it('shows N+1 as a row per loss and the worst last', () => {
    const loss = (name: string, displaced: number, unplaced: number, fit: Record<string, number>) => ({
      level: 'rack' as const,
      name,
      hosts: 20,
      displaced,
      unplaced,
      survives: unplaced === 0,
      fit,
    })
    const {rows, columns} = lossTable({
      without_each: 'rack',
      losses: [loss('r1', 40, 0, {small: 900, big: 80}), loss('r2', 38, 2, {small: 950, big: 70})],
      worst: {small: 900, big: 70},
      survives: false,
    })
    expect(table(rows, columns).split('\n')).toEqual([
      'LOST     HOSTS  DISPLACED  UNPLACED  SURVIVES  SMALL  BIG',
      'rack r1     20         40         0  yes         900   80',
      'rack r2     20         38         2  NO          950   70',
      'worst                                NO          900   70',
    ])
  })
})
