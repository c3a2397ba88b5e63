// The fault run's command line: which faults, how many providers, how long a freeze, how big
// fault 7's tmpfs, where the JSON goes. A mistake is said with the usage and exits 2.
const USAGE =
  'usage: node scripts/fault-run.mjs [--only 1,3,9[,failover]] [--failover] [--providers N] [--freeze-seconds S] [--tmpfs-mb M] [--json FILE]'
const VALUED = new Set(['only', 'providers', 'freeze-seconds', 'tmpfs-mb', 'json'])
const FLAGS = new Set(['failover', 'help'])

function usageError(message) {
  process.stderr.write(`fault-run: ${message}\n${USAGE}\n`)
  process.exit(2)
}

/** The options of `argv` (the arguments after the script's path); --help prints the usage and exits. */
export function parseOptions(argv) {
  const given = {}
  for (let i = 0; i < argv.length; i++) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(argv[i])
    if (m && FLAGS.has(m[1]) && m[2] === undefined) given[m[1]] = true
    else if (m && VALUED.has(m[1])) {
      if (m[2] !== undefined) given[m[1]] = m[2]
      else if (i + 1 < argv.length) given[m[1]] = argv[++i]
      else usageError(`--${m[1]} needs a value`)
    } else usageError(`unknown argument ${argv[i]}`)
  }
  if (given.help) {
    process.stdout.write(`${USAGE}\n`)
    process.exit(0)
  }
  const intOption = (name, dflt, min, max) => {
    const v = given[name] ?? String(dflt)
    if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) usageError(`--${name} takes an integer from ${min} to ${max}, not ${v}`)
    return Number(v)
  }
  const providers = intOption('providers', 1500, 1, 1500)
  const freezeSeconds = intOption('freeze-seconds', 20, 1, 600)
  // Fault 7's tmpfs. Not 16 MiB: under this load the daemon's own WAL grows to its 64 MiB limit
  // (wal_autocheckpoint 16384 pages, journal_size_limit 64 MiB) within seconds, so a 16 MiB tmpfs
  // is full before the fault starts and deleting the filler frees nothing. --tmpfs-mb 16 shows that.
  const tmpfsMiB = intOption('tmpfs-mb', 96, 1, 4096)
  let faults = new Set([1, 2, 3, 4, 5, 6, 7, 8, 9])
  let failover = true
  if (given.only !== undefined) {
    faults = new Set()
    failover = Boolean(given.failover)
    for (const part of given.only
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      if (part === 'failover') failover = true
      else if (/^[1-9]$/.test(part)) faults.add(Number(part))
      else usageError(`--only takes fault numbers 1 to 9 and "failover", not ${part}`)
    }
  } else if (given.failover) faults = new Set()
  if (!faults.size && !failover) usageError('nothing to run')
  return {providers, freezeSeconds, tmpfsMiB, jsonFile: given.json, faults, failover}
}

/** What each fault is called in the table. */
export const faultNames = (o) => ({
  1: 'pg_ctl restart -m fast',
  2: 'PostgreSQL stopped 15 s',
  3: 'pg_terminate_backend (all)',
  4: 'daemon started while PostgreSQL down',
  5: `PostgreSQL frozen ${o.freezeSeconds} s (SIGSTOP)`,
  6: 'PostgreSQL read-only 10 s',
  7: `SQLite disk full 10 s (${o.tmpfsMiB} MiB tmpfs)`,
  8: 'SQLite file deleted',
  9: 'answers to COMMIT lost, 5 s',
})
