import {describe, expect, it} from 'vitest'
import {closestCommands, editDistance, typedCommand} from '../../src/cli/hooks/command-not-found.js'

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
  it('names the command typed, without the arguments and flags after it', () => {
    expect(typedCommand('provider:shwo:cn-01 --db d12.db', ids)).toBe('provider shwo')
    expect(typedCommand('provider shwo cn-01', ids)).toBe('provider shwo')
    expect(typedCommand('drian cn-01 --db d12.db', [...ids, 'drain'])).toBe('drian')
    expect(typedCommand('provder list', ids)).toBe('provder list')
    expect(typedCommand('topolgy aply layout.yaml', ids)).toBe('topolgy aply')
    expect(typedCommand('zzzzzz list', ids)).toBe('zzzzzz')
    expect(typedCommand('provider --json', ids)).toBe('provider')
  })
})
