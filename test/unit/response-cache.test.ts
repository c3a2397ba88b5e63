/** The candidates answer cache: a byte budget, least recently used out first. */
import {describe, expect, it} from 'vitest'
import {ResponseCache} from '../../src/http/response-cache.js'

describe('the answer cache', () => {
  it('keeps no more bytes than its budget, and no answer above it', () => {
    const cache = new ResponseCache(10, 100)
    cache.set(1, 'a', Buffer.alloc(60))
    cache.set(1, 'b', Buffer.alloc(30))
    expect(cache.get(1, 'a')?.length).toBe(60)
    cache.set(1, 'c', Buffer.alloc(30)) // 120 bytes: the least recently used (b) goes
    expect(cache.get(1, 'b')).toBeUndefined()
    expect(cache.get(1, 'a')).toBeDefined()
    cache.set(1, 'huge', Buffer.alloc(101))
    expect(cache.get(1, 'huge')).toBeUndefined()
    expect(cache.get(1, 'c')).toBeDefined()
  })
})
