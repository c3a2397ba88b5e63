import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {placemat} from '../helpers/cli.js'
import {startForeground, until} from '../helpers/foreground-daemon.js'

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-warm-up-'))
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

const logLines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)

describe('the start-up rehearsal', () => {
  it('runs on a throwaway cloud once the daemon serves, and leaves the database as it was', async () => {
    const db = path.join(dir, 'warm.db')
    const d = await startForeground(['--db', db, '--auth', 'noauth2'], {PLACEMAT_WARM_UP: '1'})
    const warmUp = () => logLines(d.stdout()).find((l) => l.event === 'warm_up')
    await until(() => warmUp() !== undefined, 'the warm-up line', 120_000)
    const line = warmUp()
    expect(line).toMatchObject({event: 'warm_up'})
    expect(line!.stopped).toBeUndefined()
    expect(line!.requests).toBeGreaterThan(1000)
    expect(line!.prepared).toBeGreaterThan(10) // its statements, prepared on the daemon's own connection
    // Nothing of it reached the daemon's own cloud.
    const providers = await fetch(`${d.url}/resource_providers`, {
      headers: {'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39'},
    })
    expect(((await providers.json()) as {resource_providers: unknown[]}).resource_providers).toEqual([])
    await d.stop()
    expect(await d.exited).toBe(0)
    const listed = await placemat(['provider', 'list', '--db', db, '-f', 'json'])
    expect(listed.code).toBe(0)
    expect(JSON.parse(listed.stdout)).toEqual({resource_providers: []})
  })

  it('ends at once when the daemon is stopped while it runs', async () => {
    const d = await startForeground(['--db', path.join(dir, 'stop.db'), '--auth', 'noauth2', '--log-level', 'debug'], {
      PLACEMAT_WARM_UP: '1',
    })
    // Stopped once its first request went (the debug line), long before its last.
    await until(() => logLines(d.stdout()).some((l) => l.event === 'warm_up_began'), 'the warm-up to begin', 120_000)
    d.child.kill('SIGTERM')
    const code = await d.exited
    expect(code, `${d.child.signalCode} ${d.output()}`).toBe(0)
    const lines = logLines(d.stdout())
    expect(lines.find((l) => l.event === 'stopped')).toBeDefined()
    const warm = lines.find((l) => l.event === 'warm_up')
    expect(warm, 'the warm-up says it ended').toBeDefined()
    expect(warm!.stopped).toBe('the daemon is stopping')
    expect(warm!.requests).toBeGreaterThan(0)
    expect(warm!.requests).toBeLessThan(1000) // a whole rehearsal is over 1,000 requests (the test above)
  })

  it('is skipped with --no-warm-up', async () => {
    const d = await startForeground(['--db', path.join(dir, 'off.db'), '--auth', 'noauth2', '--no-warm-up'], {PLACEMAT_WARM_UP: '1'})
    await fetch(`${d.url}/`)
    await new Promise((r) => setTimeout(r, 1500))
    await d.stop()
    expect(logLines(d.stdout()).find((l) => l.event === 'warm_up')).toBeUndefined()
  })
})
