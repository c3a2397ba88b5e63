/** Flags into Placement queries, and topology rules into member_of filters: pure, no endpoint. */
import {describe, expect, it} from 'vitest'
import {emptyPlacement} from '../../src/core/affinity.js'
import {memberOfValue} from '../../src/cli/candidates/member-of.js'
import {addRuleFilters, parseGroup, parseGroups, parseRules, unsuffixedResources} from '../../src/cli/candidates/query.js'
import {nodeUuid} from '../../src/core/topology.js'

const U = (n: number) => `00000000-0000-0000-0000-${String(n).padStart(12, '0')}`

describe('parsing', () => {
  it('--group: values run up to the next KEY=', () => {
    expect(
      parseGroup('_NET:resources=SRIOV_NET_VF:1,NET_BW_EGR_KILOBIT_PER_SEC:10,required=CUSTOM_A,!CUSTOM_B,member-of=in:x,y,in-tree=h1'),
    ).toEqual({
      suffix: '_NET',
      resources: 'SRIOV_NET_VF:1,NET_BW_EGR_KILOBIT_PER_SEC:10',
      required: ['CUSTOM_A,!CUSTOM_B'],
      memberOf: ['in:x,y'],
      inTree: 'h1',
    })
    expect(parseGroup('1:required=A,required=in:B,C').required).toEqual(['A', 'in:B,C'])
    const merged = parseGroups(['_A:resources=VCPU:1', '_B:resources=PCPU:1', '_A:required=T'])
    expect(merged.map((g) => [g.suffix, g.resources, g.required])).toEqual([
      ['_A', 'VCPU:1', ['T']],
      ['_B', 'PCPU:1', []],
    ])
    for (const bad of [
      'nosuffix',
      ':resources=VCPU:1',
      '_A:VCPU:1',
      '_A:resources=',
      'bad suffix!:resources=VCPU:1',
      '_A:in_tree=a,in_tree=b',
    ]) {
      expect(() => parseGroup(bad), bad).toThrow()
    }
  })

  it('member_of values: topology names become aggregate uuids', () => {
    expect(memberOfValue('rack:k1')).toBe(nodeUuid('rack', 'k1'))
    expect(memberOfValue('!in:row:r1,room:m2')).toBe(`!in:${nodeUuid('row', 'r1')},${nodeUuid('room', 'm2')}`)
    expect(memberOfValue(`in:${U(1)},rack:k1`)).toBe(`in:${U(1)},${nodeUuid('rack', 'k1')}`)
    expect(memberOfValue(`!${U(1)}`)).toBe(`!${U(1)}`)
  })

  it("member_of values: a bare list is any of them (in:), as osc-placement's --member-of A,B", () => {
    expect(memberOfValue(`${U(1)},rack:k1`)).toBe(`in:${U(1)},${nodeUuid('rack', 'k1')}`)
    expect(memberOfValue(` ${U(1)}, ${U(2)} `)).toBe(`in:${U(1)},${U(2)}`)
  })
})

describe('topology rules', () => {
  const anchor = () => {
    const p = emptyPlacement()
    p.rack.add(nodeUuid('rack', 'k1'))
    p.row.add(nodeUuid('row', 'r1'))
    return p
  }

  it('--same / --different values: levels, consumer lists, uuids in any form Placement accepts', () => {
    expect(parseRules({same: ['rack:' + U(1).toUpperCase()], different: [`row:${U(2)},{${U(3)}}`]})).toEqual([
      {relation: 'same', level: 'rack', consumer: U(1)},
      {relation: 'different', level: 'row', consumer: U(2)},
      {relation: 'different', level: 'row', consumer: U(3)},
    ])
    for (const bad of ['rack', 'shelf:' + U(1), 'rack:not-a-uuid']) expect(() => parseRules({same: [bad]}), bad).toThrow()
  })

  it('same goes on the unsuffixed group only; different on every group; the filters alone are exact only with an unsuffixed group', () => {
    const q: Record<string, string[]> = {resources: ['VCPU:1'], resources_NET: ['SRIOV_NET_VF:1']}
    const exact = addRuleFilters(q, [
      {relation: 'same', level: 'rack', consumer: U(1), anchor: anchor()},
      {relation: 'different', level: 'row', consumer: U(2), anchor: anchor()},
    ])
    expect(exact).toBe(true)
    expect(q.member_of).toEqual([`in:${nodeUuid('rack', 'k1')}`, `!in:${nodeUuid('row', 'r1')}`])
    expect(q.member_of_NET).toEqual([`!in:${nodeUuid('row', 'r1')}`])

    const granularOnly: Record<string, string[]> = {resources_C: ['VCPU:1']}
    expect(addRuleFilters(granularOnly, [{relation: 'same', level: 'rack', consumer: U(1), anchor: anchor()}])).toBe(false)
    expect(granularOnly.member_of_C).toBeUndefined()
  })

  it('different from a consumer that is nowhere filters nothing', () => {
    const q: Record<string, string[]> = {resources: ['VCPU:1']}
    expect(addRuleFilters(q, [{relation: 'different', level: 'room', consumer: U(1), anchor: emptyPlacement()}])).toBe(true)
    expect(q.member_of).toBeUndefined()
  })
})

describe("osc-placement's resource form", () => {
  it('--resource CLASS=AMOUNT and CLASS=AMOUNT in --resources read as CLASS:AMOUNT', () => {
    expect(unsuffixedResources({resource: ['VCPU=4', 'MEMORY_MB=1024']})).toBe('VCPU:4,MEMORY_MB:1024')
    expect(unsuffixedResources({resources: 'VCPU=2,DISK_GB:10', resource: ['VGPU=1']})).toBe('VCPU:2,DISK_GB:10,VGPU:1')
    expect(unsuffixedResources({resources: 'VCPU:x'})).toBe('VCPU:x')
    expect(unsuffixedResources({})).toBeUndefined()
  })
})
