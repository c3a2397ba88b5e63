#!/usr/bin/env node
// Placement's conformance runner starts each server with ../shared/conformance/start-placemat.sh,
// which runs `$PLACEMAT_ROOT/bin/run.js daemon start --db DIR/placemat.db ...`. With PLACEMAT_ROOT
// set to this folder (scripts/conformance-on.mjs does), the daemon is this checkout's, on a new
// database of the server PLACEMAT_TEST_DB names (mysql://USER@HOST:PORT/ or postgres://...): the
// same tests, on MariaDB or PostgreSQL instead of a SQLite file.
import {createHash} from 'node:crypto'

const base = process.env.PLACEMAT_TEST_DB
const at = process.argv.indexOf('--db')
if (base && at > 0) {
  const name = `conformance_${createHash('sha256')
    .update(process.argv[at + 1])
    .digest('hex')
    .slice(0, 16)}`
  const url = new URL(base)
  if (/^mysql/.test(url.protocol)) {
    const {default: mysql} = await import('mysql2/promise')
    const c = await mysql.createConnection({
      host: url.hostname,
      port: Number(url.port || 3306),
      user: decodeURIComponent(url.username) || 'root',
    })
    await c.query(`create database if not exists ${name}`)
    await c.end()
  } else {
    const {default: pg} = await import('pg')
    const c = new pg.Client({connectionString: base})
    await c.connect()
    await c.query(`create database ${name}`).catch((err) => {
      if (err.code !== '42P04') throw err // exists already
    })
    await c.end()
  }
  url.pathname = `/${name}`
  process.argv[at + 1] = url.toString()
}
await import('../../../bin/run.js')
