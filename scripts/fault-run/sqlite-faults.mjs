// Faults 7 and 8, on SQLite: the disk full for 10 s (a tmpfs filled up), and the database file
// deleted under a running daemon, which then must refuse to start on the missing file.
import fs from 'node:fs'
import path from 'node:path'
import {binOf, logTail} from '../lib/daemon.mjs'
import {asRoot} from '../lib/postgres.mjs'
import {checkOvercommit, verifyLedger} from './checks.mjs'
import {alive, startDaemon, stopDaemon} from './daemons.mjs'
import {sqliteEnv, teardown} from './envs.mjs'
import {errorTitle, health, http} from './http.mjs'
import {live, now, run, sleep} from './live.mjs'
import {countStatuses} from './load.mjs'
import {faultNames} from './options.mjs'
import {runFault} from './run-fault.mjs'

const BIN = binOf()

/** Fault 7: skipped where this is not root (mount -t tmpfs). */
export async function faultDiskFull(o) {
  const name = faultNames(o)[7]
  const mnt = path.join(live.work, 'tmpfs')
  fs.mkdirSync(mnt)
  if (!asRoot) return {id: 7, name, skipped: 'not root: mount -t tmpfs is not permitted'}
  const m = await run('mount', ['-t', 'tmpfs', '-o', `size=${o.tmpfsMiB}m`, 'tmpfs', mnt])
  if (m.code !== 0) return {id: 7, name, skipped: `mount -t tmpfs refused: ${m.out.trim()}`}
  live.mounts.push(mnt)
  let env
  try {
    env = await sqliteEnv('sqlite-full', mnt, o.providers)
    const filler = path.join(mnt, 'filler')
    return await runFault(env, 7, name, async (ctx) => {
      const before = fs.statfsSync(mnt)
      const size = (f) => (fs.existsSync(f) ? Math.round(fs.statSync(f).size / 1024) : null)
      ctx.phase.extra.tmpfsMiB = o.tmpfsMiB
      ctx.phase.extra.freeBeforeKiB = (before.bavail * before.bsize) / 1024
      ctx.phase.extra.databaseKiB = size(env.file)
      ctx.phase.extra.walKiB = size(`${env.file}-wal`)
      if (ctx.phase.extra.freeBeforeKiB < 1024)
        ctx.phase.notes.push(
          `the ${o.tmpfsMiB} MiB tmpfs was already full before the filler (database ${ctx.phase.extra.databaseKiB} KiB, WAL ${ctx.phase.extra.walKiB} KiB): the daemon's own WAL filled it, and deleting the filler frees nothing`,
        )
      ctx.start()
      const fd = fs.openSync(filler, 'w')
      let written = 0
      for (const size of [1 << 20, 4096]) {
        const buf = Buffer.alloc(size, 1)
        try {
          for (;;) written += fs.writeSync(fd, buf)
        } catch (err) {
          if (err.code !== 'ENOSPC') throw err
        }
      }
      fs.closeSync(fd)
      const st = fs.statfsSync(mnt)
      ctx.phase.extra.fillerKiB = written / 1024
      ctx.phase.extra.freeDuringKiB = (st.bavail * st.bsize) / 1024
      await sleep(10000)
      fs.rmSync(filler)
      ctx.end()
    })
  } finally {
    if (env) await teardown(env)
    const i = live.mounts.indexOf(mnt)
    if (i >= 0) {
      live.mounts.splice(i, 1)
      const u = await run('umount', [mnt])
      if (u.code !== 0) await run('umount', ['-l', mnt])
    }
  }
}

export async function faultFileDeleted(o) {
  const dir = path.join(live.work, 'sqlite-deleted')
  fs.mkdirSync(dir)
  const env = await sqliteEnv('sqlite-del', dir, o.providers)
  const d = env.rotation[0]
  try {
    return await runFault(
      env,
      8,
      faultNames(o)[8],
      async (ctx) => {
        ctx.phase.extra.besideTheFile = {beforeDelete: fs.readdirSync(env.dir)}
        ctx.start()
        fs.rmSync(env.file)
        ctx.phase.deletedAt = now()
        await sleep(10000)
        ctx.end()
      },
      {
        recovery: false,
        async after(ctx, _result) {
          const phase = ctx.phase
          const ex = phase.extra
          // Writes acknowledged that were sent after the delete: gone with the file.
          const acked = phase.samples.filter((s) => (s.m === 'PUT' || s.m === 'DELETE') && s.s === 204)
          ex.ackedAfterDelete = acked.filter((s) => s.t0 >= phase.deletedAt).length
          ex.ackedInFlightAtDelete = acked.filter((s) => s.t0 < phase.deletedAt && s.t1 >= phase.deletedAt).length
          const writesAfter = phase.samples.filter((s) => (s.m === 'PUT' || s.m === 'DELETE') && s.t0 >= phase.deletedAt)
          ex.writesAfterDelete = countStatuses(writesAfter)
          const h = await health(d)
          ex.healthAfter = {status: h.status || h.kind, title: errorTitle(h)}
          // The ledger against the running daemon (the file is gone: it alone holds the data).
          phase.ledgerCheck = await verifyLedger(env, phase, {truthDaemon: d})
          phase.ledgerCheck.lost += ex.ackedAfterDelete
          phase.overcommitCheck = await checkOvercommit(env)
          // Stopped, it must refuse to start on the missing file, pointing at `placemat db init`.
          const stop = await stopDaemon(d)
          ex.stopExit = stop?.code ?? stop?.signal
          ex.besideTheFile.afterStop = fs.readdirSync(env.dir)
          const again = await startDaemon(env, 'sqlite-again', env.file, [], {serving: false, expectExit: true})
          const exit = await Promise.race([again.exited, sleep(20000).then(() => null)])
          const out = logTail(again.logFile, 10)
          ex.restart = {
            exit: exit ? (exit.code ?? `signal ${exit.signal}`) : 'still running after 20 s',
            refused: Boolean(exit && exit.code !== 0),
            mentionsDbInit: /placemat db init --db/.test(out),
            message: out.split('\n').slice(-3).join(' | ').slice(0, 600),
            fileCreated: fs.existsSync(env.file),
          }
          if (!exit) {
            const hh = await health(again)
            ex.restart.health = hh.status || hh.kind
            const list = await http(again, 'GET', '/resource_providers')
            ex.restart.providersServed = list.json?.resource_providers?.length ?? `${list.status || list.kind}`
            const usage = await http(again, 'GET', `/usages?project_id=${env.clients[0].project}`)
            ex.restart.usagesOfAClientProject = usage.json?.usages ?? `${usage.status || usage.kind}`
            await stopDaemon(again)
            ex.restart.besideTheFileAfter = fs.readdirSync(env.dir)
          }
          if (!fs.existsSync(env.file)) {
            const init = await run(process.execPath, [BIN, 'db', 'init', '--db', env.file], {env: {...process.env, PLACEMAT_HOME: d.home}})
            ex.dbInit = {exit: init.code, out: init.out.trim().slice(0, 300)}
            if (init.code === 0) {
              const fresh = await startDaemon(env, 'sqlite-fresh', env.file, [], {serving: false, expectExit: true})
              let serving = false
              for (let i = 0; i < 100 && alive(fresh) && !serving; i++) {
                serving = (await health(fresh)).status === 200
                if (!serving) await sleep(200)
              }
              const list = serving ? await http(fresh, 'GET', '/resource_providers') : null
              ex.dbInit.thenServes = serving
              ex.dbInit.providers = list?.json?.resource_providers?.length ?? null
              await stopDaemon(fresh)
            }
          }
          // The checks read the stopped daemon's answers already taken; nothing else runs.
          env.rotation = []
        },
      },
    )
  } finally {
    await teardown(env)
  }
}
