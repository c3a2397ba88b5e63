// bench-scaleout's command line (`npm run bench -- --scaleout ...`: the --scaleout that brought
// it here is passed over). A mistake is said on stderr and exits 2.
import path from 'node:path'
import {binOf, ROOT} from '../lib/daemon.mjs'

const USAGE = `usage: node scripts/bench-scaleout.mjs [--providers N] [--daemons 1,2,3] [--seconds S] [--delay-ms D] [--kill] [--pin] [--sqlite | --mariadb | --galera [--one-writer]] [--placement [1,2]] [--fixed-load R [--warm-up S] [--cpu-prof DIR]] [--json FILE] [--placemat DIR] [--label L] [--rounds 30]`
const VALUED = new Set([
  'providers',
  'daemons',
  'seconds',
  'delay-ms',
  'json',
  'placemat',
  'label',
  'rounds',
  'fixed-load',
  'cpu-prof',
  'warm-up',
])
const FLAGS = new Set(['kill', 'sqlite', 'pin', 'help', 'mariadb', 'galera', 'one-writer'])
// A flag that may be followed by a value of this form.
const OPTIONAL = {placement: /^\d+(,\d+)*$/}

function fail(message) {
  process.stderr.write(`bench-scaleout: ${message}\n`)
  process.exit(2)
}

/** The options of `args` (the arguments after the script's path); --help prints the usage and exits. */
export function parseOptions(args) {
  const argv = args.filter((a) => a !== '--scaleout')
  const given = {}
  for (let i = 0; i < argv.length; i++) {
    const m = /^--([a-z-]+)$/.exec(argv[i])
    if (m && FLAGS.has(m[1])) given[m[1]] = true
    else if (m && OPTIONAL[m[1]]) given[m[1]] = OPTIONAL[m[1]].test(argv[i + 1] ?? '') ? argv[++i] : true
    else if (m && VALUED.has(m[1])) {
      if (i + 1 >= argv.length) fail(`--${m[1]} needs a value\n${USAGE}`)
      given[m[1]] = argv[++i]
    } else fail(`unknown argument ${argv[i]}\n${USAGE}`)
  }
  if (given.help) {
    console.log(USAGE)
    process.exit(0)
  }
  const positiveInt = (name, dflt) => {
    const v = given[name] ?? String(dflt)
    if (!/^\d+$/.test(v) || Number(v) < 1) fail(`--${name} takes a positive integer, not ${v}`)
    return Number(v)
  }
  const counts = (name, list) =>
    list.split(',').map((s) => {
      if (!/^\d+$/.test(s.trim()) || Number(s) < 1) fail(`--${name} takes node counts like 1,2,3, not ${list}`)
      return Number(s)
    })

  const placement = given.placement !== undefined
  // Placement takes about 1.4 s a candidates query on 10,000 providers: a smaller cloud by default.
  const providers = positiveInt('providers', placement ? 1000 : 10000)
  const seconds = positiveInt('seconds', 20)
  const kill = Boolean(given.kill)
  const pin = Boolean(given.pin)
  const sqlite = Boolean(given.sqlite)
  const delayMs = given['delay-ms'] === undefined ? 0 : Number(given['delay-ms'])
  if (!Number.isFinite(delayMs) || delayMs < 0) fail(`--delay-ms takes a number of milliseconds >= 0, not ${given['delay-ms']}`)
  const daemonCounts = counts('daemons', given.daemons ?? (kill ? '3' : '1,2,3'))
  const placementCounts = !placement ? [] : given.placement === true ? daemonCounts : counts('placement', given.placement)
  if (placement && (kill || sqlite)) fail('--placement runs on PostgreSQL without --kill: --kill and --sqlite do not apply to it')
  if (kill && daemonCounts.some((k) => k < 2))
    fail('--kill needs every daemon count to be 2 or more (e.g. --daemons 3): the killed node must have survivors')
  if (sqlite && (kill || delayMs || given.daemons))
    fail('--sqlite runs one daemon on a SQLite file: --kill, --delay-ms and --daemons do not apply')
  const mariadb = Boolean(given.mariadb)
  const galera = Boolean(given.galera)
  if ((mariadb || galera) && (sqlite || placement || kill || delayMs || (mariadb && galera)))
    fail(
      '--mariadb and --galera run placemat on MariaDB (one server, or three Galera nodes): --sqlite, --placement, --kill and --delay-ms do not apply',
    )
  const oneWriter = Boolean(given['one-writer'])
  if (oneWriter && !galera) fail('--one-writer goes with --galera (every daemon on its first node)')
  const fixedLoad = given['fixed-load'] === undefined ? null : Number(given['fixed-load'])
  if (fixedLoad !== null && !(fixedLoad > 0 && Number.isFinite(fixedLoad)))
    fail(`--fixed-load takes claims per second > 0, not ${given['fixed-load']}`)
  if (fixedLoad !== null && (kill || sqlite || pin || placement))
    fail(
      '--fixed-load runs placemat on PostgreSQL or MariaDB, round-robin then pinned: --kill, --sqlite, --pin and --placement do not apply',
    )
  const warmUp = given['warm-up'] === undefined ? 15 : Number(given['warm-up'])
  if (!(warmUp >= 0)) fail(`--warm-up takes seconds >= 0, not ${given['warm-up']}`)
  if (given['warm-up'] !== undefined && fixedLoad === null) fail('--warm-up goes with --fixed-load')
  const cpuProf = given['cpu-prof'] === undefined ? null : path.resolve(given['cpu-prof'])
  if (cpuProf && fixedLoad === null) fail('--cpu-prof goes with --fixed-load (its profiles are cut to the passes)')
  return {
    placement,
    providers,
    seconds,
    kill,
    pin,
    sqlite,
    mariadb,
    galera,
    oneWriter,
    delayMs,
    daemonCounts,
    placementCounts,
    fixedLoad,
    warmUp,
    cpuProf,
    jsonFile: given.json,
    // Another build's daemons (a checkout of an earlier placemat, built), to compare both in one run.
    bin: binOf(path.resolve(given.placemat ?? ROOT)),
    label: given.label ? `${given.label}, ` : '',
    rounds: positiveInt('rounds', 30),
  }
}
