/**
 * placemat as an operator installs it: the package packed (`npm pack`, from the build the test
 * run starts with, which is what the `prepare` script runs) and installed globally into an
 * empty prefix (`npm install -g --prefix DIR ./placemat-VERSION.tgz`), nothing of the checkout
 * reachable. The installed `placemat` runs commands that take positional arguments (oclif reads
 * them from the manifest the package ships), and every package npm installed with it accepts the
 * lowest Node the package claims (package.json engines), which `overrides` in the checkout cannot
 * see to: they do not travel with a package. Its man pages are linked where man finds them.
 *
 * The install may take minutes (better-sqlite3 is built or fetched); the npm cache is used first.
 */
import {execFile} from 'node:child_process'
import {randomUUID} from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import semver from 'semver'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {childEnv, ROOT, type Result} from '../helpers/cli.js'

const PJSON = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'))
const LOWEST_NODE = semver.minVersion(PJSON.engines.node)!.version

const run = (file: string, args: string[], opts: {cwd: string; env?: NodeJS.ProcessEnv; input?: string}): Promise<Result> =>
  new Promise((resolve) => {
    const child = execFile(file, args, {cwd: opts.cwd, env: opts.env, maxBuffer: 64 << 20, timeout: 900_000}, (err, stdout, stderr) => {
      const code = err ? (typeof (err as any).code === 'number' ? (err as any).code : 1) : 0
      resolve({code, stdout: String(stdout), stderr: String(stderr)})
    })
    child.stdin!.end(opts.input)
  })

/** Every package.json under a node_modules tree: name, version, engines.node. */
function installedPackages(nodeModules: string): Array<{name: string; version: string; node?: string}> {
  const out: Array<{name: string; version: string; node?: string}> = []
  if (!fs.existsSync(nodeModules)) return out
  for (const entry of fs.readdirSync(nodeModules, {withFileTypes: true})) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue
    const dir = path.join(nodeModules, entry.name)
    if (entry.name.startsWith('@')) {
      out.push(...installedPackages(dir))
      continue
    }
    const file = path.join(dir, 'package.json')
    if (fs.existsSync(file)) {
      const pj = JSON.parse(fs.readFileSync(file, 'utf8'))
      out.push({name: pj.name, version: pj.version, node: pj.engines?.node})
    }
    out.push(...installedPackages(path.join(dir, 'node_modules')))
  }
  return out
}

describe('the packed package, installed globally into an empty prefix', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-install-'))
  const prefix = path.join(dir, 'prefix')
  const work = path.join(dir, 'work')
  const installed = path.join(prefix, 'lib', 'node_modules', 'placemat')
  const bin = path.join(prefix, 'bin', 'placemat')
  // Only the installed placemat and this node on PATH; nothing points at the checkout.
  const env = childEnv({
    PATH: [path.join(prefix, 'bin'), path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
    HOME: path.join(dir, 'home'),
  })
  const placemat = (args: string[], input?: string) => run(bin, args, {cwd: work, env, input})

  beforeAll(async () => {
    fs.mkdirSync(work)
    fs.mkdirSync(path.join(dir, 'home'))
    const npmEnv = {...process.env, HOME: process.env.HOME}
    const packed = await run('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', dir], {cwd: ROOT, env: npmEnv})
    expect(packed.code, packed.stderr).toBe(0)
    const tarball = path.join(dir, packed.stdout.trim().split('\n').at(-1)!)
    expect(path.basename(tarball)).toBe(`placemat-${PJSON.version}.tgz`)
    const started = Date.now()
    const install = await run(
      'npm',
      ['install', '-g', '--prefix', prefix, tarball, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'],
      {cwd: dir, env: npmEnv},
    )
    expect(install.code, install.stderr).toBe(0)
    console.log(`npm install -g of ${path.basename(tarball)}: ${((Date.now() - started) / 1000).toFixed(1)} s`)
  }, 900_000)

  afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

  it('runs commands with positional arguments: import FILE, provider create/show NAME, inventory set, host show, claim CONSUMER', async () => {
    const db = path.join(work, 'cloud.db')
    const t = ['--db', db]
    const ok = async (args: string[]) => {
      const r = await placemat([...args, ...t])
      expect(r.code, `placemat ${args.join(' ')}: ${r.stderr}`).toBe(0)
      return r.stdout
    }
    await ok(['db', 'init'])
    fs.writeFileSync(
      path.join(work, 'empty.yaml'),
      'placemat_snapshot: 1\nresource_classes: []\ntraits: []\nproviders: []\nconsumers: []\n',
    )
    await ok(['import', path.join(work, 'empty.yaml')])
    await ok(['provider', 'create', 'cmp-01'])
    expect(JSON.parse(await ok(['provider', 'show', 'cmp-01', '--json']))).toMatchObject({name: 'cmp-01', generation: 0})
    await ok(['inventory', 'set', 'cmp-01', 'VCPU=8', 'MEMORY_MB=4096'])
    const consumer = randomUUID()
    await ok(['claim', consumer, '--resources', 'VCPU:2,MEMORY_MB:1024', '--project', 'p1', '--user', 'u1'])
    const host = JSON.parse(await ok(['host', 'show', 'cmp-01', '--json']))
    expect(host).toMatchObject({name: 'cmp-01', disabled: false})
    expect(JSON.stringify(host.consumers)).toContain(consumer)
    // A command's help lists its argument and flags.
    const help = await ok(['provider', 'show', '--help'])
    expect(help).toMatch(/PROVIDER/)
    expect(help).toMatch(/--db/)
    // A mistyped command is still named without its arguments.
    const typo = await placemat(['provider', 'shwo', 'cmp-01', ...t])
    expect(typo.code).toBe(2)
    expect(typo.stderr).toMatch(/^placemat: command provider shwo not found; did you mean `placemat provider show`/)
  })

  it("ships the map page's files: the page and its stylesheet, and its scripts compiled", () => {
    for (const file of ['ui/index.html', 'ui/map.css', 'dist/src/ui/main.js', 'dist/src/ui/model.js'])
      expect(fs.existsSync(path.join(installed, file)), file).toBe(true)
  })

  it(`installs only packages whose engines accept node ${LOWEST_NODE}, the lowest the package claims`, () => {
    const packages = installedPackages(path.join(installed, 'node_modules'))
    expect(packages.map((p) => p.name)).toContain('fastify')
    const refused = packages
      .filter((p) => p.node && !semver.satisfies(LOWEST_NODE, p.node))
      .map((p) => `${p.name}@${p.version} (node ${p.node})`)
    expect(refused).toEqual([])
  })

  it("links every man page into PREFIX/share/man/man1, where man finds them from the PATH's PREFIX/bin", async () => {
    const man1 = path.join(prefix, 'share', 'man', 'man1')
    const pages = fs.readdirSync(path.join(installed, 'man')).sort()
    expect(pages).toContain('placemat-provider-list.1')
    expect(fs.readdirSync(man1).sort()).toEqual(pages)
    for (const page of pages) expect(fs.realpathSync(path.join(man1, page))).toBe(fs.realpathSync(path.join(installed, 'man', page)))
    if (fs.existsSync('/usr/bin/man')) {
      // No MANPATH: man works out its path from PATH, PREFIX/bin giving PREFIX/share/man.
      const {MANPATH: _, ...manEnv} = env
      const found = await run('/usr/bin/man', ['-w', 'placemat-provider-list'], {cwd: work, env: manEnv})
      expect(found.code, found.stderr).toBe(0)
      expect(fs.realpathSync(found.stdout.trim())).toBe(fs.realpathSync(path.join(installed, 'man', 'placemat-provider-list.1')))
    }
  })
})
