import {describe, expect, it} from 'vitest'
import {addedHosts, parseRatios, parseWithout} from './capacity.js'

describe('capacity flags', () => {
  it('refuses an --add file with no hosts, naming it', () => {
    for (const file of [{}, {providers: []}]) expect(() => addedHosts(file, 'add.yaml')).toThrow('--add add.yaml: no hosts to add')
    expect(addedHosts({providers: [{name: 'cmp-new'}]} as never, 'add.yaml').racks).toEqual([])
  })

  it('reads --without and --ratio, refusing what is not one', () => {
    expect(parseWithout(['rack:r1', 'host:h:1'])).toEqual([
      {level: 'rack', name: 'r1'},
      {level: 'host', name: 'h:1'},
    ])
    expect(() => parseWithout(['aisle:a'])).toThrow('--without aisle:a')
    expect(parseRatios(['VCPU=2.5'])).toEqual(new Map([['VCPU', 2.5]]))
    expect(() => parseRatios(['VCPU=0'])).toThrow('--ratio VCPU=0')
  })
})
