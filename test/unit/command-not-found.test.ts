import {describe, expect, it} from 'vitest'
import {closestCommands, editDistance} from '../../src/cli/hooks/command-not-found.js'

describe('a mistyped command', () => {
  const ids = ['provider:list', 'provider:set', 'provider:show', 'topology:apply', 'topology:show', 'rack:add', 'claim']
  it('suggests the closest commands', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3)
    expect(closestCommands('provder:list', ids)).toEqual(['provider list'])
    expect(closestCommands('topolgy:aply', ids)).toEqual(['topology apply'])
    expect(closestCommands('zzzzzz', ids)).toEqual([])
    // Arguments after the command are not part of it.
    expect(closestCommands('provider:shwo:cn-01', ids)[0]).toBe('provider show')
    expect(closestCommands('provider shwo cn-01 --json', ids)[0]).toBe('provider show')
  })
})
