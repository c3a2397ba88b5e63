/**
 * `placemat ui` against fake endpoints (no process, no HTTP): the page's address is the daemon's,
 * its base path kept, with the token in the fragment; a --db file and plain Placement have no page;
 * a browser is opened only where one can be.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {PlacementClient, type Transport} from '../../client/client.js'
import {HttpTransport} from '../../client/transports.js'
import type {Backend, Endpoint} from '../backend/backend.js'
import {exitCodeOf} from '../failure.js'
import {browserOpener, mapPage, mapPageUrl} from './map-page.js'

const endpoint = (transport: Transport, kind: Backend['kind']): Endpoint => ({
  client: new PlacementClient(transport),
  backend: async () => ({kind}) as Backend,
})

describe('the map page of the daemon a command talks to', () => {
  it("is the daemon's address, its base path kept, with the token in the fragment", async () => {
    const page = await mapPage(endpoint(new HttpTransport('https://cloud.example/placement/', 'a+b/c'), 'placemat'))
    expect(page).toEqual({url: 'https://cloud.example/placement/placemat/ui/#token=a%2Bb%2Fc'})
    expect(mapPageUrl('http://127.0.0.1:8778', undefined)).toBe('http://127.0.0.1:8778/placemat/ui/')
  })

  it('is none on plain Placement, nor for a transport with no address', async () => {
    const plain = mapPage(endpoint(new HttpTransport('http://placement:8778', 't'), 'placement'))
    await expect(plain).rejects.toThrow('http://placement:8778 is not a placemat daemon: only placemat serves the map')
    const err = await plain.catch((e) => e)
    expect(exitCodeOf(err)).toBe(2)
    const nowhere: Transport = {description: 'in here', send: async () => ({status: 200, body: {}, headers: {}}), close: async () => {}}
    await expect(mapPage(endpoint(nowhere, 'placemat'))).rejects.toThrow('in here has no address to give a browser')
  })

  it('opens it with xdg-open (open on macOS) where that is on the PATH, and says so where it is not', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-opener-'))
    try {
      expect(browserOpener({PATH: dir}, 'linux')).toBeNull()
      fs.writeFileSync(path.join(dir, 'xdg-open'), '#!/bin/sh\n', {mode: 0o755})
      fs.writeFileSync(path.join(dir, 'open'), '#!/bin/sh\n', {mode: 0o644})
      expect(browserOpener({PATH: `/nonexistent${path.delimiter}${dir}`}, 'linux')).toBe(path.join(dir, 'xdg-open'))
      // Not executable: none.
      expect(browserOpener({PATH: dir}, 'darwin')).toBeNull()
    } finally {
      fs.rmSync(dir, {recursive: true, force: true})
    }
  })
})
