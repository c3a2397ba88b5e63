#!/usr/bin/env node
// npm run faults: every database fault placemat should live through, each under a steady claim
// load, and what the daemons did. The tables go to stdout, progress to stderr.
//
//   npm run faults                                  # faults 1-9, then the failover run
//   npm run faults -- --only 1,3,8                  # some faults (add "failover" to the list for it)
//   npm run faults -- --failover                    # the failover run alone
//   npm run faults -- --providers 1000 --freeze-seconds 10 --json faults.json
//
// Set-up. PostgreSQL faults (1-6, 9): a throwaway PostgreSQL cluster of its own (initdb, durable
// defaults: fsync, synchronous_commit and full_page_writes on) on a free port, 2 daemons on one
// database, each through a TcpProxy of its own (scripts/tcp-proxy.mjs), with
// --db-connect-timeout 2 --db-statement-timeout 5 --db-lock-timeout 5; N flat providers
// (--providers, default and most 1,500) loaded through the first one's batch API. SQLite faults
// (7, 8): 1 daemon on a SQLite file, the same providers; fault 7's file on a tmpfs of --tmpfs-mb
// MiB (default 96: the daemon's WAL alone grows to 64 MiB under this load, see TMPFS_MB). Failover: a primary and a streaming
// standby (pg_basebackup -R; synchronous_standby_names='*', synchronous_commit=on on the primary),
// 2 daemons through one shared TcpProxy.
//
// The load: 4 clients, each request to the next daemon in turn: GET /allocation_candidates
// (VCPU:1,MEMORY_MB:64, limit=5; MEMORY_MB:128 if that finds nothing), PUT /allocations/{new uuid}
// with the first candidate (the next one on 409), DELETE of the client's oldest claim once it holds
// more than 10. Every request has a 60 s client timeout. After an answer that is not 2xx/409 (or a
// network error) a client waits 100 ms before its next request (a real client would honour
// Retry-After; this keeps the recovery measurement fine-grained).
//
// Each fault: ensure everything is back to normal (PostgreSQL up and writable, proxies passing,
// every daemon running and healthy; a daemon that exited is restarted, its exit counted where it
// happened), 5 s of load, the fault, at least 5 s of load after it (longer, up to 60 s, until every
// daemon has acknowledged a claim), then the checks with no load running.
//
// The columns:
//   statuses during    load requests in flight at any time between the fault's start and end
//                      (pg_terminate_backend, an instant: its first 2 s), by HTTP status; network
//                      errors as net(CODE), client timeouts (60 s) as timeout; ">15s:N" counts
//                      answers slower than 15 s (connect 2 + lock 5 + statement 5 + 3 s margin)
//   longest wait       the slowest of those requests, ms
//   recovery           from the fault's end to the first claim answered 2xx on every daemon, s
//   daemon exits       daemon processes that ended by themselves (not the ones this script stops,
//                      nor the --db-wait daemon of fault 4, which must exit)
//   writes lost        of the acknowledged writes (claims answered 204, deletes answered 204): a
//                      claim acknowledged and not deleted-with-204 that is absent, or a delete
//                      acknowledged whose consumer is present. PostgreSQL: read from the database
//                      itself (SQL); SQLite: from the daemon. Fault 8 also counts every write
//                      acknowledged that was sent after the file was deleted.
//   overcommit         (provider, resource class) pairs with usage > (total - reserved) *
//                      allocation_ratio: GET inventories and usages of every provider on every
//                      daemon, and (PostgreSQL) the same sums in SQL
// The notes under the tables name every goal missed, answers a daemon gave that disagree with the
// database (stale), what health said during each fault, and the daemons' error log lines.
//
// The pieces are in scripts/fault-run/: options, live (what was started, stopped on the way out),
// postgres (the clusters), daemons, http, load (the clients and their ledger), checks, run-fault
// (a fault under load), envs (PostgreSQL and SQLite set-ups), postgres-faults (1-6),
// sqlite-faults (7, 8), failover, report.
import fs from 'node:fs'
import {postgresBin} from './lib/postgres.mjs'
import {failoverRun} from './fault-run/failover.mjs'
import {openWork, progress, state, stopEverything} from './fault-run/live.mjs'
import {parseOptions} from './fault-run/options.mjs'
import {postgresFaults} from './fault-run/postgres-faults.mjs'
import {report} from './fault-run/report.mjs'
import {faultDiskFull, faultFileDeleted} from './fault-run/sqlite-faults.mjs'

const o = parseOptions(process.argv.slice(2))
const work = openWork()
const results = {
  faults: [],
  failover: null,
  notes: state.notes,
  options: {providers: o.providers, freezeSeconds: o.freezeSeconds, tmpfsMiB: o.tmpfsMiB, faults: [...o.faults], failover: o.failover},
}

async function main() {
  progress(
    `work directory ${work}; ${o.providers} providers; faults ${[...o.faults].join(',') || 'none'}${o.failover ? ' and the failover run' : ''}`,
  )
  const pgFaults = [...o.faults].filter((n) => n <= 6 || n === 9)
  if (pgFaults.length || o.failover) {
    if (!postgresBin()) throw new Error('no PostgreSQL server binaries (initdb) under /usr/lib/postgresql')
  }
  if (pgFaults.length) await postgresFaults(o, results)
  if (o.faults.has(7)) results.faults.push(await faultDiskFull(o))
  if (o.faults.has(8)) results.faults.push(await faultFileDeleted(o))
  if (o.failover) await failoverRun(o, results)
}

let code = 0
try {
  await main()
} catch (err) {
  results.fatal = err.stack ?? String(err)
  progress(`FAILED: ${results.fatal}`)
  code = 1
}
process.stdout.write(report(results, o) + '\n')
if (o.jsonFile) {
  fs.writeFileSync(o.jsonFile, JSON.stringify(results, null, 1) + '\n')
  progress(`raw results in ${o.jsonFile}`)
}
stopEverything()
process.exit(code)
