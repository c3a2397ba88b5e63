// Throwaway MariaDB servers (Debian's mariadb-server) for tests and benchmarks: one server
// (startMariadb), or a Galera cluster of them (startGalera, with galera-4) on 127.0.0.1. Each
// has its own data folder, socket and loopback ports, no grant tables (any user gets in), and is
// stopped and removed after. `mariadbAvailable` and `galeraAvailable` are false where they are
// not installed (the tests that need them are then skipped).
//
// Galera's state transfer: a joining node with no state (the nodes after the first, at start)
// gets a full copy by rsync SST (Debian's wsrep_sst_rsync; mariabackup SST needs mariadb-backup
// and an SST user, so a grant table); a node started again asks for the writesets it missed
// (IST), from the position it recovers first with `--wsrep-recover` when it was killed (its
// grastate.dat then says seqno -1). As root, the servers run as `mysql`: the SST script's rsync
// daemon, started by root, would serve the data folder as nobody, which cannot write into it.
//
// Quorum: a node killed leaves the others to find it gone (evs.suspect_timeout, 3 s here); two of
// three killed leave the last one non-primary (`wsrep_ready` OFF) until one comes back. Two of
// three stopped cleanly leave the last one primary (a node stopping says goodbye).
import {execFile, spawn} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {promisify} from 'node:util'
import {freePort} from './ports.mjs'

const run = promisify(execFile)

/** Stops a child (SIGTERM) and waits for it to exit. */
async function stopChild(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((r) => child.once('exit', r))
  child.kill('SIGTERM')
  await exited
}

export const mariadbAvailable = ['/usr/bin/mariadb-install-db', '/usr/sbin/mariadbd', '/usr/bin/mariadb'].every((f) => fs.existsSync(f))

/**
 * One MariaDB server: `database(name)` makes a database and gives SQLAlchemy's URL of it (as
 * placement.conf has it), `placematDatabase()` a new one of its own name and placemat's URL
 * (mysql://); `pid` is the server's, `sql(text)` runs a statement through its socket.
 * `shutdown()` stops it and keeps its data folder, `restart()` starts it again on that folder
 * and port (a database server going away and coming back).
 */
export async function startMariadb(opts = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-mariadb-'))
  const user = os.userInfo().username
  await run('/usr/bin/mariadb-install-db', [
    '--no-defaults',
    `--datadir=${dir}/data`,
    `--user=${user}`,
    '--auth-root-authentication-method=normal',
    '--skip-test-db',
  ])
  const port = await freePort()
  const socket = path.join(dir, 'sock')
  const client = (sqlText) => run('/usr/bin/mariadb', ['--no-defaults', '-S', socket, '-N', '-B', '-e', sqlText]).then((r) => r.stdout)
  let child
  /** Starts mariadbd on the folder and port, and waits until it answers. */
  const launch = async () => {
    const log = fs.openSync(path.join(dir, 'log'), 'a')
    child = spawn(
      '/usr/sbin/mariadbd',
      [
        '--no-defaults',
        `--datadir=${dir}/data`,
        `--socket=${socket}`,
        `--port=${port}`,
        '--bind-address=127.0.0.1',
        `--user=${user}`,
        '--skip-grant-tables',
        '--skip-log-bin',
        `--innodb-buffer-pool-size=${opts.bufferPool ?? '64M'}`,
        `--pid-file=${dir}/pid`,
      ],
      {stdio: ['ignore', log, log]},
    )
    fs.closeSync(log)
    for (let i = 0; ; i++) {
      if (child.exitCode !== null) throw new Error(`mariadbd exited ${child.exitCode}; see ${dir}/log`)
      if (
        await client('select 1').then(
          () => true,
          () => false,
        )
      )
        break
      if (i > 120) throw new Error(`mariadbd did not start; see ${dir}/log`)
      await new Promise((r) => setTimeout(r, 250))
    }
  }
  await launch()
  let databases = 0
  return {
    port,
    get pid() {
      return child.pid
    },
    sql: client,
    async database(name) {
      await client(`create database ${name} character set utf8mb4`)
      return `mysql+pymysql://placement:secret@127.0.0.1:${port}/${name}?charset=utf8`
    },
    async placematDatabase() {
      const name = `placemat_${++databases}`
      await client(`create database ${name}`)
      return `mysql://placemat@127.0.0.1:${port}/${name}`
    },
    /** Stops the server (SIGTERM, a clean shutdown), keeping its data folder for restart(). */
    async shutdown() {
      await stopChild(child)
    },
    /** Starts the server again on its data folder and port (stopping it first if it runs). */
    async restart() {
      await stopChild(child)
      await launch()
    },
    async stop() {
      await stopChild(child)
      fs.rmSync(dir, {recursive: true, force: true})
    },
    /** At once, for a way out that cannot wait (a signal): SIGKILL, and the folder removed. */
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      fs.rmSync(dir, {recursive: true, force: true})
    },
  }
}

const PROVIDER = '/usr/lib/galera/libgalera_smm.so'

export const galeraAvailable = [
  '/usr/bin/mariadb-install-db',
  '/usr/sbin/mariadbd',
  '/usr/bin/mariadb',
  PROVIDER,
  '/usr/bin/wsrep_sst_rsync',
  '/usr/bin/rsync',
].every((f) => fs.existsSync(f))

/** Who the nodes run as: this user, or `mysql` as root (see above). */
function serverUser() {
  if (process.getuid?.() !== 0) return undefined
  const line = fs
    .readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('mysql:'))
  if (!line) return undefined
  const [, , uid, gid] = line.split(':')
  return {name: 'mysql', uid: Number(uid), gid: Number(gid)}
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

const running = (c) => !!c && c.exitCode === null && c.signalCode === null

/** A Galera node's mariadbd exited while waited for; the message ends with its log's last lines. */
class Exited extends Error {
  constructor(i, n) {
    let tail = ''
    try {
      tail = fs.readFileSync(path.join(n.dir, 'log'), 'utf8').trimEnd().split('\n').slice(-15).join('\n')
    } catch {}
    super(`galera node${i} exited (${n.child?.exitCode ?? n.child?.signalCode}); see ${n.dir}/log:\n${tail}`)
  }
}

export async function startGalera(opts = {}) {
  const count = opts.nodes ?? 3
  const top = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-galera-'))
  const owner = serverUser()
  const user = owner?.name ?? os.userInfo().username
  if (owner) fs.chmodSync(top, 0o755)
  const nodes = []
  for (let i = 0; i < count; i++) {
    const dir = path.join(top, `node${i}`)
    fs.mkdirSync(path.join(dir, 'tmp'), {recursive: true})
    if (owner) for (const d of [dir, path.join(dir, 'tmp')]) fs.chownSync(d, owner.uid, owner.gid)
    nodes.push({
      dir,
      port: await freePort(),
      socket: path.join(dir, 'sock'),
      gcommPort: await freePort(),
      istPort: await freePort(),
      sstPort: await freePort(),
    })
  }
  // Each its own temporary folder: side by side in /tmp, one now and then fails (temporary tables
  // gone, "Unknown table 'mysql.tmp_user_sys'").
  await Promise.all(
    nodes.map((n) =>
      run(
        '/usr/bin/mariadb-install-db',
        ['--no-defaults', `--datadir=${n.dir}/data`, `--user=${user}`, '--auth-root-authentication-method=normal', '--skip-test-db'],
        {env: {...process.env, TMPDIR: `${n.dir}/tmp`}},
      ),
    ),
  )
  const clusterAddress = `gcomm://${nodes.map((n) => `127.0.0.1:${n.gcommPort}`).join(',')}`

  const options = (i) => {
    const n = nodes[i]
    return [
      '--no-defaults',
      `--datadir=${n.dir}/data`,
      `--socket=${n.socket}`,
      `--port=${n.port}`,
      '--bind-address=127.0.0.1',
      `--user=${user}`,
      '--skip-grant-tables',
      '--skip-log-bin',
      '--innodb-buffer-pool-size=64M',
      `--pid-file=${n.dir}/pid`,
      `--tmpdir=${n.dir}/tmp`,
      '--binlog-format=ROW',
      '--default-storage-engine=InnoDB',
      '--innodb-autoinc-lock-mode=2',
      // A smaller write-set bound than Galera's 2 GiB, where a test needs one it can reach.
      ...(opts.maxWsSize ? [`--wsrep-max-ws-size=${opts.maxWsSize}`] : []),
      '--wsrep-on=ON',
      `--wsrep-provider=${PROVIDER}`,
      `--wsrep-cluster-address=${clusterAddress}`,
      '--wsrep-cluster-name=placemat-test',
      `--wsrep-node-name=node${i}`,
      `--wsrep-node-address=127.0.0.1:${n.gcommPort}`,
      `--wsrep-provider-options=${[
        `base_port=${n.gcommPort}`,
        `ist.recv_addr=127.0.0.1:${n.istPort}`,
        'gcache.size=32M',
        // A lost node is noticed in seconds (defaults: 5 s, 15 s, 7.5 s; keepalives every second).
        'evs.suspect_timeout=PT3S',
        'evs.inactive_timeout=PT6S',
        'evs.install_timeout=PT6S',
      ].join(';')}`,
      '--wsrep-sst-method=rsync',
      `--wsrep-sst-receive-address=127.0.0.1:${n.sstPort}`,
    ]
  }

  const spawnNode = (i, extra) => {
    const n = nodes[i]
    const log = fs.openSync(path.join(n.dir, 'log'), 'a')
    n.child = spawn('/usr/sbin/mariadbd', [...options(i), ...extra], {stdio: ['ignore', log, log]})
    fs.closeSync(log)
  }

  const client = (i, text) =>
    run('/usr/bin/mariadb', ['--no-defaults', '-S', nodes[i].socket, '-N', '-B', '-e', text]).then((r) => r.stdout)

  const status = async (i) => {
    const vars = new Map(
      (await client(i, "show status like 'wsrep_%'"))
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('\t')),
    )
    return {
      ready: vars.get('wsrep_ready') === 'ON',
      clusterSize: Number(vars.get('wsrep_cluster_size') ?? 0),
      state: vars.get('wsrep_local_state_comment') ?? '',
      primary: vars.get('wsrep_cluster_status') === 'Primary',
    }
  }

  /** Waits (up to 3 minutes: a state transfer on a busy machine) until node `i`'s status passes `ok`. */
  const waitFor = async (i, ok, what) => {
    const n = nodes[i]
    let last
    for (let t = 0; ; t++) {
      if (!running(n.child)) throw new Exited(i, n)
      last = await status(i).catch(() => last)
      if (last && ok(last)) return
      if (t > 720) throw new Error(`galera node${i} not ${what} (${JSON.stringify(last)}); see ${n.dir}/log`)
      await sleep(250)
    }
  }

  /**
   * The position a killed node's InnoDB has (`--wsrep-recover`), for it to ask the cluster for what
   * it missed (IST) rather than a full copy: after a SIGKILL grastate.dat says seqno -1.
   */
  const recoveredPosition = async (i) => {
    const n = nodes[i]
    const grastate = path.join(n.dir, 'data', 'grastate.dat')
    if (!fs.existsSync(grastate) || !/^seqno:\s+-1\s*$/m.test(fs.readFileSync(grastate, 'utf8'))) return undefined
    const out = await run('/usr/sbin/mariadbd', [...options(i), '--wsrep-recover']).then(
      (r) => r.stdout + r.stderr,
      (e) => `${e.stdout ?? ''}${e.stderr ?? ''}`,
    )
    fs.appendFileSync(path.join(n.dir, 'log'), out)
    const position = /WSREP: Recovered position: ([0-9a-f-]+:\d+)/.exec(out)?.[1]
    return position?.startsWith('00000000-0000-0000-0000-000000000000') ? undefined : position
  }

  const stopAll = async () => {
    // stopChild waits for an exit a SIGKILLed node has had already.
    await Promise.all(nodes.map((n) => (running(n.child) ? stopChild(n.child) : undefined)))
    fs.rmSync(top, {recursive: true, force: true})
  }

  const synced = (s) => s.ready && s.state === 'Synced'
  /**
   * Node `i` joins and is waited for until synced. A joiner that exits during its state transfer
   * is started again (twice at most) on fresh IST and SST ports: a transfer's port taken meanwhile
   * or a donor busy with another joiner are passing causes.
   */
  const join = async (i) => {
    for (let attempt = 0; ; attempt++) {
      spawnNode(i, [])
      try {
        return await waitFor(i, synced, 'synced')
      } catch (err) {
        if (!(err instanceof Exited) || attempt >= 2) throw err
        fs.appendFileSync(path.join(nodes[i].dir, 'log'), `\n-- exited while joining; started again (${attempt + 1}) --\n`)
        nodes[i].istPort = await freePort()
        nodes[i].sstPort = await freePort()
      }
    }
  }
  try {
    spawnNode(0, ['--wsrep-new-cluster'])
    await waitFor(0, synced, 'ready')
    // One joiner at a time: each takes a full copy (rsync) from a donor that serves one at a time.
    for (let i = 1; i < count; i++) await join(i)
    await Promise.all(nodes.map((_, i) => waitFor(i, (s) => synced(s) && s.clusterSize === count, 'in a cluster of all')))
  } catch (err) {
    // Left for its logs; the processes go.
    for (const n of nodes) n.child?.kill('SIGKILL')
    throw err
  }

  const live = () => nodes.findIndex((n) => running(n.child))

  return {
    nodes: nodes.map((n) => ({
      port: n.port,
      socket: n.socket,
      get pid() {
        return running(n.child) ? n.child.pid : undefined
      },
    })),
    async database(name) {
      await client(live(), `create database \`${name}\` character set utf8mb4 collate utf8mb4_nopad_bin`)
      // Seen on every running node before its URL is handed out.
      for (let i = 0; i < count; i++)
        if (running(nodes[i].child)) await client(i, `set session wsrep_sync_wait=1; show databases like '${name}'`)
      return nodes.map((n) => `mysql://root@127.0.0.1:${n.port}/${name}`)
    },
    sql: client,
    status,
    async kill(i) {
      const c = nodes[i].child
      if (!running(c)) return
      const exited = new Promise((r) => c.once('exit', r))
      c.kill('SIGKILL')
      await exited
    },
    async stop(i) {
      if (running(nodes[i].child)) await stopChild(nodes[i].child)
    },
    async restart(i) {
      if (running(nodes[i].child)) throw new Error(`galera node${i} is running`)
      const position = await recoveredPosition(i)
      spawnNode(i, position ? [`--wsrep-start-position=${position}`] : [])
      await waitFor(i, synced, 'synced')
    },
    stopAll,
  }
}
