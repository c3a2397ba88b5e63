// bench-scaleout's command line (`npm run bench -- --scaleout ...`: the --scaleout that brought
// it here is passed over). A mistake is said on stderr and exits 2.
import path from 'node:path'
import {binOf, ROOT} from '../lib/daemon.mjs'

const USAGE = `usage: node scripts/bench-scaleout.mjs [--providers N] [--daemons 1,2,3] [--seconds S] [--delay-ms D] [--kill] [--pin] [--databases sqlite,postgres,mariadb,galera | --sqlite | --mariadb | --galera] [--one-writer] [--placement [1,2]] [--fixed-load R [--warm-up S] [--cpu-prof DIR]] [--json FILE] [--placemat DIR] [--label L] [--rounds 30]`
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
  'databases',
])
const DATABASES = ['sqlite', 'postgres', 'mariadb', 'galera']
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

  // --sqlite, --mariadb and --galera are --databases of one.
  const shorthand = DATABASES.filter((d) => given[d])
  if (shorthand.length > 1 || (shorthand.length && given.databases))
    fail('--sqlite, --mariadb, --galera and --databases each say where to run: give one of them')
  const databaseList = given.databases ?? (shorthand[0] || 'postgres')
  const databases = [...new Set(databaseList.split(','))]
  for (const d of databases) if (!DATABASES.includes(d)) fail(`--databases takes a list of ${DATABASES.join(', ')}, not ${databaseList}`)
  const placement = given.placement !== undefined
  // Placement takes about 1.4 s a candidates query on 10,000 providers: a smaller cloud by default.
  const providers = positiveInt('providers', placement ? 1000 : 10000)
  const seconds = positiveInt('seconds', 20)
  const kill = Boolean(given.kill)
  const pin = Boolean(given.pin)
  const delayMs = given['delay-ms'] === undefined ? 0 : Number(given['delay-ms'])
  if (!Number.isFinite(delayMs) || delayMs < 0) fail(`--delay-ms takes a number of milliseconds >= 0, not ${given['delay-ms']}`)
  const daemonCounts = counts('daemons', given.daemons ?? (kill ? '3' : '1,2,3'))
  const placementCounts = !placement ? [] : given.placement === true ? daemonCounts : counts('placement', given.placement)
  const onlyPostgres = databases.length === 1 && databases[0] === 'postgres'
  if ((kill || delayMs) && !onlyPostgres) fail('--kill and --delay-ms run on PostgreSQL alone')
  if (placement && !databases.some((d) => d === 'postgres' || d === 'mariadb'))
    fail('--placement runs Placement on PostgreSQL or MariaDB: give one of them in --databases')
  if (kill && daemonCounts.some((k) => k < 2))
    fail('--kill needs every daemon count to be 2 or more (e.g. --daemons 3): the killed node must have survivors')
  if (databases.length === 1 && databases[0] === 'sqlite' && given.daemons) fail('SQLite runs one daemon: --daemons does not apply')
  const oneWriter = Boolean(given['one-writer'])
  if (oneWriter && !databases.includes('galera')) fail('--one-writer goes with galera (every daemon on its first node)')
  const fixedLoad = given['fixed-load'] === undefined ? null : Number(given['fixed-load'])
  if (fixedLoad !== null && !(fixedLoad > 0 && Number.isFinite(fixedLoad)))
    fail(`--fixed-load takes claims per second > 0, not ${given['fixed-load']}`)
  if (fixedLoad !== null && (kill || pin || (databases.length === 1 && databases[0] === 'sqlite')))
    fail('--fixed-load runs placemat on PostgreSQL or MariaDB, round-robin then pinned: --kill, --sqlite and --pin do not apply')
  // Given --databases, a fixed load is a pass after the churn (one run shows both); alone, it replaces the churn.
  const churn = fixedLoad === null || given.databases !== undefined
  if (placement && fixedLoad !== null && !churn) fail('--placement is measured by the churn: with --fixed-load, give --databases too')
  const warmUp = given['warm-up'] === undefined ? 15 : Number(given['warm-up'])
  if (!(warmUp >= 0)) fail(`--warm-up takes seconds >= 0, not ${given['warm-up']}`)
  if (given['warm-up'] !== undefined && fixedLoad === null) fail('--warm-up goes with --fixed-load')
  const cpuProf = given['cpu-prof'] === undefined ? null : path.resolve(given['cpu-prof'])
  if (cpuProf && fixedLoad === null) fail('--cpu-prof goes with --fixed-load (its profiles are cut to the passes)')
  return {
    databases,
    churn,
    placement,
    providers,
    seconds,
    kill,
    pin,
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
