// --placement: OpenStack Placement (Debian's placement-api 8.0.0 under uwsgi) on the bench's
// PostgreSQL cluster or MariaDB server (its usual home): its own database (placement-manage db
// sync, noauth2), the same providers written straight into its tables, K uwsgi nodes on their own
// ports, measured as placemat's.
import {execFileSync} from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import mysql from 'mysql2/promise'
import pg from 'pg'
import {loadIntoPlacementTables, loadIntoPlacementTablesMysql} from '../huge-sets.mjs'
import {freePort} from '../lib/ports.mjs'
import {pgUrl, sql} from '../lib/postgres.mjs'
import {must} from './http.mjs'
import {measure} from './measure.mjs'
import {startNode, stopDaemon} from './nodes.mjs'
import {progress} from './running.mjs'

const PLACEMENT_DB = 'placement_scaleout'
// Each node as ../shared/perf/run-anchor.sh serves Placement on PostgreSQL.
const UWSGI_PROCESSES = 2
const UWSGI_THREADS = 4

/** Placement's version as installed (python3-placement, without the Debian revision). */
function placementVersion() {
  try {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own format, not a template
    return execFileSync('dpkg-query', ['-W', '-f=${Version}', 'python3-placement'], {encoding: 'utf8'}).replace(/-[^-]*$/, '')
  } catch {
    return 'unknown version'
  }
}

/** Placement's own database on the bench's PostgreSQL cluster, through `pgPort` (the delay proxy's when there is one, as the daemons'). */
export function placementOnPostgres(db, pgPort) {
  return {
    kind: 'postgres',
    driver: {module: 'psycopg2', package: 'python3-psycopg2'},
    async create() {
      await sql(db.port, 'postgres', `create database ${PLACEMENT_DB}`)
      return `postgresql+psycopg2://postgres@127.0.0.1:${pgPort}/${PLACEMENT_DB}`
    },
    async load(mode, n) {
      const client = new pg.Client({connectionString: pgUrl(db.port, PLACEMENT_DB)})
      await client.connect()
      try {
        return await loadIntoPlacementTables(client, mode, n)
      } finally {
        await client.end()
      }
    },
    statsUrl: pgUrl(db.port, PLACEMENT_DB),
  }
}

/** Placement's own database on the bench's MariaDB server (scripts/lib/mariadb.mjs), as kolla-ansible gives it one. */
export function placementOnMariadb(server) {
  return {
    kind: 'mariadb',
    driver: {module: 'pymysql', package: 'python3-pymysql'},
    create: () => server.database(PLACEMENT_DB),
    async load(mode, n) {
      const conn = await mysql.createConnection({host: '127.0.0.1', port: server.port, user: 'root', database: PLACEMENT_DB})
      try {
        return await loadIntoPlacementTablesMysql(conn, mode, n)
      } finally {
        await conn.end()
      }
    },
    // Transactions are counted on PostgreSQL only.
    statsUrl: null,
  }
}

/**
 * Placement's own database in `home` (placementOnPostgres or placementOnMariadb) with its schema
 * (placement-manage db sync), and the config directory of its nodes (OS_PLACEMENT_CONFIG_DIR):
 * noauth2, the database at home.create()'s URL.
 */
async function preparePlacement(home, dir) {
  for (const file of ['/usr/bin/placement-api', '/usr/bin/placement-manage', '/usr/bin/uwsgi']) {
    if (!fs.existsSync(file))
      throw new Error(
        `--placement: no ${file} (apt-get install -y placement-api python3-placement uwsgi-core uwsgi-plugin-python3 ${home.driver.package})`,
      )
  }
  try {
    execFileSync('/usr/bin/python3', ['-c', `import ${home.driver.module}`], {stdio: 'pipe'})
  } catch {
    throw new Error(`--placement: Placement reaches ${home.kind} through ${home.driver.module}: apt-get install -y ${home.driver.package}`)
  }
  const connection = await home.create()
  fs.mkdirSync(dir, {recursive: true})
  const conf = path.join(dir, 'placement.conf')
  fs.writeFileSync(
    conf,
    [
      '[DEFAULT]',
      'debug = False',
      '[api]',
      'auth_strategy = noauth2',
      '[placement_database]',
      `connection = ${connection}`,
      '[oslo_policy]',
      'enforce_scope = False',
      'enforce_new_defaults = False',
      '',
    ].join('\n'),
  )
  try {
    execFileSync('/usr/bin/placement-manage', ['--config-file', conf, 'db', 'sync'], {stdio: 'pipe'})
  } catch (err) {
    throw new Error(
      `placement-manage db sync failed: ${String(err.stderr ?? err.message)
        .trim()
        .slice(-800)}`,
    )
  }
}

/** One Placement node: a uwsgi instance (master, UWSGI_PROCESSES workers of UWSGI_THREADS threads) on a port of its own. */
async function startPlacement({name, configDir, home}) {
  const port = await freePort()
  // As run-anchor.sh: --lazy-apps, each worker loads the app and opens its connections itself.
  const args = ['--plugins', 'python3,http', '--http-socket', `127.0.0.1:${port}`, '--wsgi-file', '/usr/bin/placement-api']
  args.push(
    '--processes',
    String(UWSGI_PROCESSES),
    '--threads',
    String(UWSGI_THREADS),
    '--master',
    '--die-on-term',
    '--lazy-apps',
    '--thunder-lock',
  )
  args.push('--buffer-size', '65535', '--add-header', 'Connection: close')
  return startNode({
    name,
    home,
    port,
    command: '/usr/bin/uwsgi',
    args,
    env: {OS_PLACEMENT_CONFIG_DIR: configDir},
    // Its log has a line per request (uwsgi's and Placement's INFO): only warnings, errors and
    // tracebacks are reported, not uwsgi's notice that it runs as root.
    reported: (line) => /\b(WARNING|ERROR|CRITICAL)\b|Traceback/.test(line) && !/running uWSGI as root/.test(line),
    // One worker answers before the other has loaded the app: started when all have.
    ready: (log) => (log.match(/WSGI app 0 \(mountpoint=''\) ready/g) ?? []).length >= UWSGI_PROCESSES,
    fields: {},
  })
}

/** The --placement rows: Placement's database, the same providers in its tables, K nodes for each count. */
export async function runPlacement(o, {home, where, work, proxyRtt = null, directRtt = null}) {
  const dir = path.join(work, `placement-${home.kind}`)
  const version = placementVersion()
  progress(`Placement ${version} on ${home.kind}: database ${PLACEMENT_DB}, placement-manage db sync...`)
  await preparePlacement(home, dir)
  // A first start fills in the standard resource classes and traits the rows refer to.
  const loader = await startPlacement({name: 'placement loader', configDir: dir, home: path.join(dir, 'loader')})
  let loadS
  try {
    await must(loader.url, 'PUT', '/traits/CUSTOM_BENCH', undefined, [201, 204])
    progress(`writing ${o.providers} flat providers into Placement's tables...`)
    const t0 = performance.now()
    const made = await home.load('flat', o.providers)
    loadS = (performance.now() - t0) / 1000
    progress(`wrote ${made} providers in ${loadS.toFixed(1)} s`)
  } finally {
    await stopDaemon(loader)
  }
  const setup = `Placement ${version}, uwsgi ${UWSGI_PROCESSES} processes × ${UWSGI_THREADS} threads a node, ${where}`
  for (const k of o.placementCounts) {
    const nodes = []
    try {
      for (let i = 0; i < k; i++) {
        progress(`starting Placement node ${i + 1} of ${k}...`)
        nodes.push(await startPlacement({name: `placement${i + 1}`, configDir: dir, home: path.join(dir, `k${k}-node${i + 1}`)}))
      }
      await measure(o, {setup, backend: home.kind, nodes, loadS, proxyRtt, directRtt, statsUrl: home.statsUrl, server: 'placement'})
    } finally {
      await Promise.all(nodes.map(stopDaemon))
    }
  }
}
