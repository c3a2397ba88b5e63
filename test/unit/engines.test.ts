/**
 * `npm install` on the Node.js the README names says nothing of engines: every package in the
 * lock file takes the oldest Node.js placemat says it runs on (package.json's engines).
 */
import fs from 'node:fs'
import path from 'node:path'
import semver from 'semver'
import {describe, expect, it} from 'vitest'

const root = path.resolve(import.meta.dirname, '../..')
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))
const lock = JSON.parse(fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8'))

describe('engines', () => {
  it("every locked package runs on the oldest Node.js placemat's engines allow, and the README names it", () => {
    const oldest = semver.minVersion(pkg.engines.node)!.version
    const refusing = Object.entries(lock.packages as Record<string, {engines?: {node?: string}}>)
      .filter(([name, p]) => name && p.engines?.node && !semver.satisfies(oldest, p.engines.node))
      .map(([name, p]) => `${name} wants node ${p.engines!.node}`)
    expect(refusing, `on Node.js ${oldest}`).toEqual([])
    const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8')
    expect(readme).toContain(`Needs Node.js ${oldest.replace(/\.0$/, '')} or newer`)
  })
})
