// A claim's rows at SQLite's own cost: the statements the daemon ran for each traced PUT
// (PLACEMAT_PROFILE=statements keeps them, with the time each took there: src/store/phase-profile.ts),
// run again in the same order, with the same parameters, on a copy of its database taken before
// them, by better-sqlite3 alone: no HTTP, no State, no JavaScript around them but the loop that
// sends them. Each claim's statements (BEGIN IMMEDIATE to COMMIT, synchronous=NORMAL as the
// daemon commits) are timed, then one fdatasync of the WAL, as the daemon makes each commit
// durable. What is left of placemat's PUT beyond these two and node:http's own round trip is the
// cost of its code; SQLite's time for the same statements inside the daemon is set beside it.
import fs from 'node:fs'
import {createRequire} from 'node:module'
import path from 'node:path'
import {fmtFixed, pct} from './stats.mjs'

/** Claims between two checkpoints (outside the timing), so the WAL is written over in place. */
const CHECKPOINT_EVERY = 100
/** The WAL's size before the replay: room for CHECKPOINT_EVERY claims of up to 20 frames. */
const WAL_BYTES = 16 << 20

/** The better-sqlite3 of the checkout whose daemon is measured. */
const driverOf = (checkout) => createRequire(path.join(checkout, 'package.json'))('better-sqlite3')

/** Copies `dbFile` (which another process may be writing) page by page into `copyFile`. */
export async function copyDatabase(checkout, dbFile, copyFile) {
  const Database = driverOf(checkout)
  const source = new Database(dbFile, {readonly: true, fileMustExist: true})
  try {
    await source.backup(copyFile)
  } finally {
    source.close()
  }
}

/**
 * Runs `claims` (each a list of [text, parameters, ms it took in the daemon], as the daemon ran
 * them) on `copyFile` in turn: {sqlite, inDaemon, fdatasync} p50 in ms, and the WAL frames a
 * claim writes on average.
 */
export function replayClaims(checkout, copyFile, claims) {
  const Database = driverOf(checkout)
  // The daemon's WAL is as large as its busiest seconds made it, and written over in place; a
  // WAL SQLite does not recognise (zeros) is started again from its beginning, its size kept.
  const walFile = `${copyFile}-wal`
  const zeros = fs.openSync(walFile, 'w')
  fs.writeSync(zeros, Buffer.alloc(WAL_BYTES))
  fs.fsyncSync(zeros)
  fs.closeSync(zeros)
  const db = new Database(copyFile, {fileMustExist: true})
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('wal_autocheckpoint = 0')
  const wal = fs.openSync(walFile, 'r')
  const prepared = new Map()
  const sqlite = []
  const sync = []
  let frames = 0
  let counted = 0
  try {
    for (let i = 0; i < claims.length; i++) {
      const t0 = performance.now()
      for (const [text, params] of claims[i]) {
        let st = prepared.get(text)
        if (!st) prepared.set(text, (st = db.prepare(text)))
        if (st.reader) st.all(...params)
        else st.run(...params)
      }
      const t1 = performance.now()
      fs.fdatasyncSync(wal)
      sync.push(performance.now() - t1)
      sqlite.push(t1 - t0)
      if ((i + 1) % CHECKPOINT_EVERY === 0 || i === claims.length - 1) {
        const [r] = db.pragma('wal_checkpoint(RESTART)')
        frames += r.log
        counted += (i + 1) % CHECKPOINT_EVERY || CHECKPOINT_EVERY
      }
    }
    const [{integrity_check: check}] = db.pragma('integrity_check')
    if (check !== 'ok') throw new Error(`the replayed copy is not whole: ${check}`)
  } finally {
    fs.closeSync(wal)
    db.close()
  }
  // The same statements' time inside the daemon, as it measured them.
  const inDaemon = claims.map((claim) => claim.reduce((sum, [, , ms]) => sum + ms, 0))
  return {
    sqlite: pct(sqlite, 50),
    inDaemon: pct(inDaemon, 50),
    fdatasync: pct(sync, 50),
    frames: counted ? frames / counted : null,
    claims: claims.length,
  }
}

/**
 * The replay beside what a PUT costs, in each setting of `settings` ({name: {httpMs, floorPut,
 * placemat}}, p50 ms): the least a PUT writing these rows can cost (SQLite's work and the sync,
 * replayed, and node:http's own round trip), the faster floor's PUT, what 1.3x of it leaves for
 * placemat's own code, and placemat's PUT.
 */
export function reportReplay(replay, settings) {
  const names = Object.keys(settings)
  const views = Object.values(settings)
  const row = (label, value) => console.log(`| ${label} | ${views.map((v) => fmtFixed(value(v), 3)).join(' | ')} |`)
  const least = (v) => replay.sqlite + replay.fdatasync + v.httpMs
  console.log('')
  console.log(`| a claim's PUT at SQLite's own cost (${replay.claims} claims replayed), p50 ms | ${names.join(' | ')} |`)
  console.log(`|---|${names.map(() => '---:').join('|')}|`)
  row("SQLite alone: the daemon's own statements for a claim, BEGIN to COMMIT, run again on a copy of its database", () => replay.sqlite)
  row("(SQLite's time for the same statements inside the daemon, between its own code)", () => replay.inDaemon)
  row('one fdatasync of the WAL after them', () => replay.fdatasync)
  row("node:http's round trip (the shared floor's GET, in its process)", (v) => v.httpMs)
  row('**the least a PUT of these rows costs** (the three above)', least)
  row("the faster floor's PUT", (v) => v.floorPut)
  row("1.3x the faster floor's PUT (the target)", (v) => 1.3 * v.floorPut)
  row("**left for placemat's own code at 1.3x** (the target less the least)", (v) => 1.3 * v.floorPut - least(v))
  row("placemat's PUT, its client in its process", (v) => v.placemat)
  row("placemat's own code now (its PUT less the least)", (v) => v.placemat - least(v))
  console.log(`\nWAL frames a replayed claim writes: ${fmtFixed(replay.frames, 1)} on average.`)
}
