/**
 * A daemon started with --flavors on the example datacenter (docs/cli/capacity.md): `placemat
 * capacity` without a flavor file asks its catalog and gets what the file gives; SIGHUP reads the
 * file again (a broken one refused, the catalog in force kept); and Debian's Prometheus, scraping
 * the daemon with the admin token as a bearer token (no --metrics-public), stores the flavor gauges
 * with the counts the command line prints. Prometheus' part is skipped, and said so, where it is
 * not installed.
 */
import {spawn, type ChildProcess} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {ROOT, placemat} from '../helpers/cli.js'
import {freePort, startForeground, until, type ForegroundDaemon} from '../helpers/foreground-daemon.js'

const PROMETHEUS = ['/usr/bin/prometheus', '/usr/sbin/prometheus'].find((p) => fs.existsSync(p))
if (!PROMETHEUS) console.warn('capacity-daemon: no prometheus here (apt-get install prometheus): its scrape is skipped')

const FIXTURES = path.join(ROOT, 'fixtures')

describe('capacity on a daemon with a flavor catalog', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-capacity-daemon-'))
  const db = path.join(dir, 'p.db')
  const flavors = path.join(dir, 'flavors.json')
  const env = {PLACEMAT_HOME: dir}
  let d: ForegroundDaemon
  let prometheus: ChildProcess | undefined
  beforeAll(async () => {
    for (const args of [
      ['db', 'init', '--db', db],
      ['apply', path.join(FIXTURES, 'cloud.yaml'), '--db', db],
      ['topology', 'apply', path.join(FIXTURES, 'cloud-layout.yaml'), '--db', db],
    ]) {
      const r = await placemat(args, {env})
      expect(r.code, r.stderr).toBe(0)
    }
    fs.copyFileSync(path.join(FIXTURES, 'flavors.json'), flavors)
    d = await startForeground(['--db', db, '--auth', 'noauth2', '--flavors', flavors], env)
  })
  afterAll(async () => {
    prometheus?.kill('SIGKILL')
    await d?.stop()
    fs.rmSync(dir, {recursive: true, force: true})
  })

  const onDaemon = async (args: string[]) => {
    const r = await placemat(['capacity', ...args, '--url', d.url, '--token', 'admin'], {env})
    expect(r.code, r.stderr).toBe(0)
    return r
  }

  it('answers placemat capacity from its catalog as the file would', async () => {
    const fromDaemon = JSON.parse((await onDaemon(['--json'])).stdout)
    const fromFile = JSON.parse((await onDaemon(['--flavors', flavors, '--json'])).stdout)
    expect(fromDaemon).toEqual(fromFile)
    const narrowed = JSON.parse((await onDaemon(['--flavor', 'm1.large', '--level', 'room', '--json'])).stdout)
    expect(narrowed.domains).toEqual(fromFile.domains.filter((x: any) => x.flavor === 'm1.large' && x.level === 'room'))
    const unknown = await placemat(['capacity', '--flavor', 'm9.nope', '--url', d.url, '--token', 'admin'], {env})
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('No flavor named m9.nope in the catalog')
  })

  it('reads its flavor file again on SIGHUP, and keeps its catalog when the file is broken', async () => {
    const names = async () => [
      ...new Set(JSON.parse((await onDaemon(['--level', 'cloud', '--json'])).stdout).domains.map((x: any) => x.flavor)),
    ]
    fs.writeFileSync(flavors, JSON.stringify([{Name: 'only.one', VCPUs: 1, RAM: 512, Disk: 1}]))
    d.child.kill('SIGHUP')
    await until(async () => (await names()).join() === 'only.one', 'the reloaded catalog')
    fs.writeFileSync(flavors, '[{"Name": "broken",')
    d.child.kill('SIGHUP')
    await until(() => /flavors not reloaded/.test(d.output()), 'the refused reload in the log')
    expect(await names()).toEqual(['only.one'])
    fs.copyFileSync(path.join(FIXTURES, 'flavors.json'), flavors)
    d.child.kill('SIGHUP')
    await until(async () => (await names()).length === 5, 'the catalog back')
  })

  it.skipIf(!PROMETHEUS)('is scraped by Prometheus: the flavor gauges hold the counts the command line prints', async () => {
    const port = await freePort()
    const config = path.join(dir, 'prometheus.yml')
    const target = new URL(d.url).host
    // the admin token (noauth2: `admin`) as docs/operator/daemon.md's stanza gives it: Authorization: Bearer
    const credentials = path.join(dir, 'metrics-token')
    fs.writeFileSync(credentials, 'admin\n', {mode: 0o600})
    fs.writeFileSync(
      config,
      [
        'global: {scrape_interval: 1s}',
        'scrape_configs:',
        '  - job_name: placemat',
        `    authorization: {type: Bearer, credentials_file: '${credentials}'}`,
        `    static_configs: [{targets: ['${target}']}]`,
        '',
      ].join('\n'),
    )
    prometheus = spawn(
      PROMETHEUS!,
      [`--config.file=${config}`, `--storage.tsdb.path=${path.join(dir, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`],
      {stdio: 'ignore'},
    )
    const query = async (q: string) => {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(q)}`).catch(() => null)
      return res?.ok
        ? ((await res.json()) as {data: {result: Array<{metric: Record<string, string>; value: [number, string]}>}}).data.result
        : []
    }
    let racks: Awaited<ReturnType<typeof query>> = []
    await until(async () => (racks = await query('placemat_flavor_fit{level="rack"}')).length > 0, 'a scrape stored in Prometheus', 60_000)
    const cli = JSON.parse((await onDaemon(['--level', 'rack', '--json'])).stdout).domains
    const stored = Object.fromEntries(racks.map((r) => [`${r.metric.flavor} ${r.metric.domain}`, Number(r.value[1])]))
    console.log(`Prometheus: placemat_flavor_fit{level="rack"}: ${JSON.stringify(stored)}`)
    expect(stored).toEqual(Object.fromEntries(cli.map((x: any) => [`${x.flavor} ${x.name}`, x.fit])))
    expect((await query('placemat_fragmentation_loss{level="room",flavor="m1.small"}')).map((r) => Number(r.value[1]))).toEqual([
      cli.length
        ? JSON.parse((await onDaemon(['--flavor', 'm1.small', '--level', 'room', '--json'])).stdout).domains[0].fragmentation_loss
        : 0,
    ])
  })
})
