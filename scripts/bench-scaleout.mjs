#!/usr/bin/env node
// npm run bench -- --scaleout: several placemat API nodes on one PostgreSQL database (each keeps
// the whole cloud in memory and follows the others' commits through the change journal).
// It starts its own throwaway PostgreSQL cluster (default durability settings), loads N flat
// placeload providers through one daemon's batch API, then for each daemon count K starts K
// daemons (--no-answer-cache) and measures:
//   churn         8 clients for S seconds, each request to the next node in turn: a candidates
//                 query (VCPU:1,MEMORY_MB:128,DISK_GB:5, limit=5), a claim (PUT /allocations) of
//                 the first candidate that can still be written (on 409 the next), releasing a
//                 client's oldest claim once it holds 20; claims/s, claim p50/p99, 409s, 5xx and
//                 network errors
//   overcommit    usages against inventories of every provider a claim touched, read from a node
//                 other than the last writer's for half of them (must be 0)
//   after write   K >= 2: a write on node A (inventory reserved, traits, aggregates in turn), then
//                 the first limit=5 candidates query on node B, timed (30 rounds, no churn); beside it
//                 the same query when nothing was written before it (what catching up adds)
//   start-up, RSS each daemon, spawn to its first answered candidates query; VmRSS then
//   --kill        one node SIGKILLed at S/3 of the churn and restarted at 2S/3: the survivors'
//                 5xx and errors, requests lost in flight, restart to serving, and the survivors'
//                 full reloads (placemat_state_reloads_total on /metrics)
//   --pin         each client sends all its requests to one node (client i to node i mod K), as a
//                 load balancer hashing on the source sends each scheduler to one node, instead of
//                 every request to the next node in turn
//   --databases L  each of L in turn, in one run and one table: sqlite (one daemon on a SQLite file; the
//                 writes of "after write" made by the CLI, --db), postgres (a throwaway cluster), mariadb
//                 (a throwaway MariaDB server), galera (a three-node Galera cluster on 127.0.0.1, daemon i
//                 on node i mod 3, or all on node 1 with --one-writer). postgres alone is the default;
//                 --sqlite, --mariadb and --galera are --databases of one. With --databases, --fixed-load
//                 adds its passes after each count's churn instead of replacing it, and --placement runs
//                 Placement after the postgres and the mariadb rows, on that database
//   --fixed-load R  instead of the churn, an open loop offering R claims/s (GET candidates limit=5,
//                 PUT of the first candidate that can be written, the oldest claim released once 160
//                 are held), each request to the next node in turn, for S s after --warm-up W s (15)
//                 unmeasured: each daemon's and PostgreSQL's CPU per claim at a load that leaves the
//                 cores partly idle. For K >= 2 also by claim (a claim's requests to one node), pinned
//                 to node A (the others kept current by one read a claim) and those reads alone, which
//                 split K nodes' extra CPU into applying others' changes, the writer's own, and
//                 interleaving (scripts/bench-scaleout/fixed-load.mjs). --cpu-prof DIR runs the daemons under
//                 node --cpu-prof (profiles kept in DIR) and adds each pass's functions with the most
//                 self time per claim
//   --placement   after the placemat rows, the same for OpenStack Placement (Debian's placement-api
//                 8.0.0, python3-placement and python3-psycopg2 or python3-pymysql) on the same
//                 PostgreSQL cluster or MariaDB server (the one kolla-ansible gives it): its own
//                 database (placement-manage db sync, auth_strategy noauth2), the same providers
//                 written straight into its tables (it has no batch API), K uwsgi instances on their
//                 own ports, each 2 processes x 4 threads as ../shared/perf/run-anchor.sh serves it;
//                 the same churn, check and after-write rounds through the same API (microversion
//                 latest = 1.39 on 8.0.0). CPU per claim counts each uwsgi master and its workers;
//                 no round trips (its transactions are several statements each: their number per
//                 claim is shown instead) and no /metrics counters. Placement answers a candidates
//                 query in about 100 ms on 1,000 providers and 1.4 s on 10,000, so with --placement
//                 --providers defaults to 1,000 (for placemat too: the rows compare the same cloud);
//                 then a Placement row takes about S + 20 s, a run with --daemons 1,2 about two minutes.
//                 --placement alone runs Placement on the --daemons counts, --placement 1,2 on those.
//                 Its log lines at WARNING are mostly its "Over capacity" notes of the churn's 409s
//
//   npm run bench -- --scaleout                              # 10,000 providers; 1, 2, 3 daemons; 20 s
//   npm run bench -- --scaleout --providers 2000 --daemons 1,3 --seconds 10
//   npm run bench -- --scaleout --delay-ms 1                 # a TCP proxy adds 1 ms round trip to PostgreSQL
//                                                            # (D/2 each way by setTimeout: Node's timers wait at least 1 ms,
//                                                            # so small delays come out larger; the table shows the measured one)
//   npm run bench -- --scaleout --kill --daemons 3           # SIGKILL one node at S/3, restart it at 2S/3
//   npm run bench -- --scaleout --pin --daemons 1,3          # each client to one node (source-hashing balancer)
//   npm run bench -- --scaleout --fixed-load 100 --daemons 1,3 --providers 1000   # CPU per claim at 100 claims/s offered
//   npm run bench -- --scaleout --sqlite                     # one daemon on SQLite, writes by the CLI (--db)
//   npm run bench -- --scaleout --mariadb --daemons 1,3      # K daemons on one MariaDB server
//   npm run bench -- --scaleout --galera --daemons 3         # daemon i on node i mod 3 of a three-node Galera cluster
//   npm run bench -- --scaleout --galera --one-writer        # every daemon on the cluster's first node (one active writer)
//   npm run bench -- --scaleout --databases sqlite,postgres,mariadb,galera --daemons 1,3 --fixed-load 40 --placement 1 --providers 1000
//                                                            # every database in one run, churn and fixed load, Placement on each server
//   npm run bench -- --scaleout --json out.jsonl             # the JSON lines to a file (else stderr)
//   npm run bench -- --scaleout --placemat ../old --label old  # the daemons of another (built) checkout, to compare
//   npm run bench -- --scaleout --placement --daemons 1,2    # placemat, then OpenStack Placement, on 1 and 2 nodes
//
// The table goes to stdout, progress and (without --json) one JSON line per configuration to stderr.
//
// The pieces are in scripts/bench-scaleout/: options, running (what was started, stopped on the
// way out), http, postgres, delay-proxy, nodes, churn, check, after-write, measure, report,
// placement, fixed-load (with fixed-load-report and cpu-profiles), runs.
import {printProfiles} from './bench-scaleout/cpu-profiles.mjs'
import {printFixedLoad} from './bench-scaleout/fixed-load-report.mjs'
import {parseOptions} from './bench-scaleout/options.mjs'
import {openJson, printChurnTable, results} from './bench-scaleout/report.mjs'
import {runMariadb, runPostgres, runSqlite} from './bench-scaleout/runs.mjs'
import {openWork, running, sleep, stopEverything} from './bench-scaleout/running.mjs'

const o = parseOptions(process.argv.slice(2))
const work = openWork()
openJson(o.jsonFile)
let exitCode = 0
try {
  for (const database of o.databases) {
    if (database === 'sqlite') await runSqlite(o, work)
    else if (database === 'postgres') await runPostgres(o, work)
    else await runMariadb(o, work, {galera: database === 'galera'})
  }
} catch (err) {
  process.stderr.write(`bench-scaleout: ${err.stack ?? err.message}\n`)
  exitCode = 1
} finally {
  for (const child of running.children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
  await sleep(200)
}
printChurnTable()
printFixedLoad(results.fixedRows)
printProfiles(results.profiles)
stopEverything()
process.exit(exitCode)
