// Faults 1 to 6 and 9, on PostgreSQL: a fast restart, 15 s stopped, every backend terminated, a
// daemon started while it is down (and one with --db-wait that must give up), frozen (SIGSTOP),
// read-only; answers to COMMIT lost (the server commits, the daemon's connection is cut before the
// answer arrives).
import {pgUrl, sql} from '../lib/postgres.mjs'
import {alive, startDaemon, stopDaemon} from './daemons.mjs'
import {postgresEnv, proxied, teardown} from './envs.mjs'
import {errorTitle, health} from './http.mjs'
import {live, now, progress, sleep} from './live.mjs'
import {verifyLedger} from './checks.mjs'
import {faultNames} from './options.mjs'
import {logTail} from '../lib/daemon.mjs'
import {pgCtl, pgStart, pgStop, postmasterPids, setReadOnly} from './postgres.mjs'
import {RECOVERY_CAP_MS, runFault} from './run-fault.mjs'

/** The faults of `o.faults` among 1 to 6 and 9, their rows into `results.faults`, the whole ledger's check into `results.postgresLedger`. */
export async function postgresFaults(o, results) {
  const names = faultNames(o)
  const env = await postgresEnv(o.providers)
  const c = env.cluster
  try {
    if (o.faults.has(1)) {
      results.faults.push(
        await runFault(env, 1, names[1], async (ctx) => {
          ctx.start()
          await pgCtl(c, ['-l', c.log, '-o', c.opts, '-m', 'fast', '-w', '-t', '120', 'restart'], 150000)
          ctx.end()
        }),
      )
    }
    if (o.faults.has(2)) {
      results.faults.push(
        await runFault(env, 2, names[2], async (ctx) => {
          ctx.start()
          await pgStop(c, 'fast')
          await sleep(15000)
          await pgStart(c)
          ctx.end()
        }),
      )
    }
    if (o.faults.has(3)) {
      results.faults.push(
        await runFault(
          env,
          3,
          names[3],
          async (ctx) => {
            ctx.start()
            const r = await sql(
              c.port,
              'postgres',
              'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
              [env.dbName],
            )
            ctx.end()
            ctx.phase.extra.terminated = r.rowCount
            ctx.phase.notes.push(`${r.rowCount} backends terminated`)
          },
          {instant: true},
        ),
      )
    }
    if (o.faults.has(4)) results.faults.push(await faultStartWhileDown(env, names[4]))
    if (o.faults.has(5)) {
      results.faults.push(
        await runFault(env, 5, names[5], async (ctx) => {
          const pids = await postmasterPids(c)
          ctx.start()
          for (const pid of pids) {
            live.frozen.add(pid)
            try {
              process.kill(pid, 'SIGSTOP')
            } catch {}
          }
          ctx.phase.extra.frozen = pids.length
          await sleep(o.freezeSeconds * 1000)
          for (const pid of pids) {
            try {
              process.kill(pid, 'SIGCONT')
            } catch {}
            live.frozen.delete(pid)
          }
          ctx.end()
        }),
      )
    }
    if (o.faults.has(6)) {
      results.faults.push(
        await runFault(env, 6, names[6], async (ctx) => {
          ctx.start()
          await setReadOnly(c, true)
          await sleep(10000)
          await setReadOnly(c, false)
          ctx.end()
        }),
      )
    }
    if (o.faults.has(9)) {
      results.faults.push(
        await runFault(env, 9, names[9], async (ctx) => {
          // Again and again for 5 s: each connection that sends a commit's journal image gets no
          // more answers; 200 ms later every connection is cut. Those commits are done, their
          // answers never came: each daemon must find them kept, not answer "not made".
          ctx.start()
          const until = now() + 5000
          let cuts = 0
          while (now() < until) {
            for (const p of env.proxies) p.dropRepliesAfter = /insert into "?placemat_change_images/i
            await sleep(200)
            for (const p of env.proxies) {
              p.dropRepliesAfter = null
              p.cutAll()
            }
            cuts++
            await sleep(300)
          }
          ctx.end()
          ctx.phase.notes.push(`${cuts} times: answers dropped after a commit's journal image for 200 ms, then every connection cut`)
        }),
      )
    }
    // The whole PostgreSQL run's ledger, in SQL.
    if (env.ledger.size) {
      const all = await verifyLedger(env, {id: 'all'}, {all: true})
      results.postgresLedger = all
      progress(`PostgreSQL run: ${all.acked} claims acknowledged, ${all.deletesAcked} deletes acknowledged, ${all.lost} lost`)
    }
  } finally {
    await teardown(env)
  }
}

async function faultStartWhileDown(env, name) {
  const c = env.cluster
  let extraDaemon = null
  const res = await runFault(
    env,
    4,
    name,
    async (ctx) => {
      const ex = ctx.phase.extra
      ctx.start()
      await pgStop(c, 'fast')
      const downAt = now()
      // A third daemon, starting while the database is down: it must listen and say "starting".
      const proxyC = await proxied(env, c.port)
      extraDaemon = await startDaemon(env, 'pg-c', pgUrl(proxyC.port, env.dbName), [], {serving: false})
      const h = await health(extraDaemon)
      ex.newDaemonHealth = {status: h.status || h.kind, title: errorTitle(h), detail: h.json?.errors?.[0]?.detail ?? h.json?.status}
      ex.newDaemonSaysStarting = h.status === 503 && /starting/i.test(`${errorTitle(h)} ${h.json?.errors?.[0]?.detail}`)
      if (alive(extraDaemon)) env.rotation.push(extraDaemon)
      // One with --db-wait 3: it must give up, exit non-zero and name the database.
      const proxyD = await proxied(env, c.port)
      const waitUrl = pgUrl(proxyD.port, env.dbName)
      const t = now()
      const dw = await startDaemon(env, 'pg-d', waitUrl, ['--db-wait', '3'], {serving: false, expectExit: true})
      const exit = await Promise.race([dw.exited, sleep(60000).then(() => null)])
      const out = logTail(dw.logFile, 20)
      ex.dbWait = {
        exit: exit ? (exit.code ?? `signal ${exit.signal}`) : 'still running after 60 s',
        seconds: exit ? (dw.exitInfo.at - t) / 1000 : null,
        namesDatabase: out.includes(env.dbName) || out.includes(`127.0.0.1:${proxyD.port}`),
        message: out
          .split('\n')
          .filter((l) => !l.startsWith('{') && /did not answer|database/i.test(l))
          .slice(-1)
          .join('')
          .slice(0, 500),
      }
      if (!exit) await stopDaemon(dw)
      // Down for at least 8 s in all.
      await sleep(Math.max(0, downAt + 8000 - now()))
      await pgStart(c)
      ctx.end()
      // Until the new daemon's health says 200, polled apart from the load.
      const t1 = now()
      while (now() - t1 < RECOVERY_CAP_MS && alive(extraDaemon)) {
        const hh = await health(extraDaemon)
        if (hh.status === 200) {
          ex.newDaemonHealthySeconds = (now() - t1) / 1000
          break
        }
        await sleep(100)
      }
    },
    {
      async after(ctx, result) {
        ctx.phase.extra.newDaemonFirstClaimSeconds = result.recoveryPerDaemon?.['pg-c'] ?? null
      },
    },
  )
  // The third daemon leaves the rotation after the checks.
  if (extraDaemon) {
    await stopDaemon(extraDaemon)
    env.rotation = env.rotation.filter((d) => d !== extraDaemon)
  }
  env.daemons = env.daemons.filter((d) => d.name !== 'pg-c' && d.name !== 'pg-d')
  return res
}
