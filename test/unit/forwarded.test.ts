/** The forwarding headers read strictly (forwarded.ts), and the base path taken off a URL (edge.ts). */
import {describe, expect, it} from 'vitest'
import {stripBasePath} from '../../src/http/edge.js'
import {cleanPrefix, forwardedNode, linkHost, parseForwarded} from '../../src/http/forwarded.js'

describe('RFC 7239 Forwarded', () => {
  it('reads elements and pairs, quoted strings, any case of names, empty members', () => {
    expect(parseForwarded('for=192.0.2.60;proto=http;by=203.0.113.43')).toEqual([{for: '192.0.2.60', proto: 'http'}])
    expect(parseForwarded('For="[2001:db8:cafe::17]:4711", for=192.0.2.43;Host="a.example:8443", ,for=unknown;')).toEqual([
      {for: '[2001:db8:cafe::17]:4711'},
      {for: '192.0.2.43', host: 'a.example:8443'},
      {for: 'unknown'},
    ])
    expect(parseForwarded('for="a\\"b"')).toEqual([{for: 'a"b'}])
  })

  it('refuses the whole header for any syntax error', () => {
    for (const bad of ['for', 'for=', '=x', 'for=a b', 'for="open', 'for=1;for=2', 'for=x"y', 'f r=1', '', ' , '])
      expect(parseForwarded(bad), bad).toBeNull()
  })

  it('takes a node as an address without port or brackets, or unknown and _obfuscated as they are', () => {
    expect(forwardedNode('192.0.2.43:47011')).toEqual({address: '192.0.2.43', ip: true})
    expect(forwardedNode('[2001:DB8::1]:80')).toEqual({address: '2001:db8::1', ip: true})
    expect(forwardedNode('[2001:db8::1]')).toEqual({address: '2001:db8::1', ip: true})
    expect(forwardedNode('_gazonk')).toEqual({address: '_gazonk', ip: false})
    expect(forwardedNode('unknown')).toEqual({address: 'unknown', ip: false})
    for (const bad of ['2001:db8::1', '[1.2.3.4]', '999.1.1.1', 'host.example', '_a b', '[::1]:x'])
      expect(forwardedNode(bad), bad).toBeUndefined()
  })
})

describe('what a link may carry', () => {
  it('a host name or IP with a port', () => {
    for (const ok of ['cloud.example', 'cloud.example:8443', '127.0.0.1:8778', '[::1]:8778', 'localhost']) expect(linkHost(ok), ok).toBe(ok)
    for (const bad of ['evil.example/x', 'a b', 'a@b', '[zz::]', '-a.example', 'a..b', '', 'x:port'])
      expect(linkHost(bad), bad).toBeUndefined()
  })

  it('a clean absolute path prefix, else nothing', () => {
    expect(cleanPrefix('/placement')).toBe('/placement')
    expect(cleanPrefix('/placement/')).toBe('/placement')
    expect(cleanPrefix('/a/b-c/%7Eu')).toBe('/a/b-c/%7Eu')
    expect(cleanPrefix('/')).toBe('')
    expect(cleanPrefix('')).toBe('')
    expect(cleanPrefix(undefined)).toBeNull()
    for (const bad of [
      'placement',
      '//evil.com',
      '/a b',
      '/a\r\nX: y',
      '/a/../b',
      '/..',
      '/%2e%2E',
      '/a//b',
      '/a?x',
      '/a#x',
      '/a,/b',
      '/a\\b',
      '/%zz',
      'http://x/',
    ]) {
      expect(cleanPrefix(bad), bad).toBeNull()
    }
  })
})

describe('the base path', () => {
  it('is taken off a URL under it, and only then', () => {
    expect(stripBasePath('/placement/traits?name=in:A', '/placement')).toBe('/traits?name=in:A')
    expect(stripBasePath('/placement', '/placement')).toBe('/')
    expect(stripBasePath('/placement?x=1', '/placement')).toBe('/?x=1')
    expect(stripBasePath('/placement/', '/placement')).toBe('/')
    expect(stripBasePath('/traits', '/placement')).toBe('/traits')
    expect(stripBasePath('/placementx/traits', '/placement')).toBe('/placementx/traits')
    expect(stripBasePath('/traits', '')).toBe('/traits')
  })
})
