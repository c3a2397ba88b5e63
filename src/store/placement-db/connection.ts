/**
 * OpenStack Placement's own database, reached as placement.conf names it
 * (`[placement_database] connection`, SQLAlchemy's URL forms): MySQL/MariaDB
 * (`mysql+pymysql://`), PostgreSQL (`postgresql://`, `postgresql+psycopg2://`) or SQLite
 * (`sqlite:///relative`, `sqlite:////absolute`). Opened for reading it never writes: SQLite
 * read-only (no journal-mode change), the others in read-only sessions. Opened for writing
 * (the way back, `export --to-placement`) it writes only rows of Placement's own tables.
 */
import fs from 'node:fs'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import {Kysely, MysqlDialect, PostgresDialect, SqliteDialect, sql} from 'kysely'
import pg from 'pg'
import {parseIni} from './ini.js'
import type {PlacementTables} from './schema.js'

export type PlacementEngine = 'mysql' | 'postgresql' | 'sqlite'

export interface PlacementUrl {
  engine: PlacementEngine
  /** SQLite: the file. */
  file?: string
  host?: string
  port?: number
  user?: string
  password?: string
  database?: string
  /** MySQL: `?unix_socket=`. */
  socket?: string
}

/** A URL or placement.conf placemat cannot read; the message leaves the URL to the caller to name. */
export class PlacementUrlError extends Error {}

/** SQLAlchemy's URL of a Placement database, read as placement.conf's connection option is. */
export function parsePlacementUrl(url: string): PlacementUrl {
  const scheme = /^([a-z0-9]+)(\+[a-z0-9_]+)?:\/\//i.exec(url)
  if (!scheme) throw new PlacementUrlError('not a database URL (mysql+pymysql://, postgresql://, sqlite:///...)')
  const dialect = scheme[1].toLowerCase()
  if (dialect === 'sqlite') {
    // sqlite:///rel.db is relative to the working folder, sqlite:////abs.db absolute.
    const rest = url.slice(scheme[0].length)
    if (!rest.startsWith('/') || rest === '/')
      throw new PlacementUrlError('a SQLite URL is sqlite:///FILE (relative) or sqlite:////FILE (absolute)')
    const file = rest.slice(1).split('?')[0]
    return {engine: 'sqlite', file: path.resolve(decodeURIComponent(file))}
  }
  const engine: PlacementEngine | undefined =
    dialect === 'mysql' || dialect === 'mariadb' ? 'mysql' : dialect === 'postgresql' || dialect === 'postgres' ? 'postgresql' : undefined
  if (!engine) throw new PlacementUrlError(`Placement's database is MySQL/MariaDB, PostgreSQL or SQLite, not ${dialect}`)
  let u: URL
  try {
    u = new URL(url.replace(scheme[0], 'db://'))
  } catch {
    throw new PlacementUrlError('not a readable database URL')
  }
  const database = decodeURIComponent(u.pathname.replace(/^\//, ''))
  if (!database) throw new PlacementUrlError('the URL names no database (…/placement)')
  return {
    engine,
    host: u.hostname || undefined,
    port: u.port ? Number(u.port) : undefined,
    user: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    database,
    socket: u.searchParams.get('unix_socket') ?? (engine === 'postgresql' ? (u.searchParams.get('host') ?? undefined) : undefined),
  }
}

export {maskPassword} from '../target.js'

/** placement.conf's `[placement_database] connection`. */
export function placementUrlOfConfig(file: string): string {
  let text: string
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (err) {
    throw new PlacementUrlError(`${file}: ${(err as Error).message}`)
  }
  const url = parseIni(text, file).get('placement_database')?.get('connection')
  if (!url) throw new PlacementUrlError(`${file}: no [placement_database] connection`)
  return url
}

/** kysely on Placement's database; `write` false opens it so that nothing can be written. */
export async function openPlacement(url: string, options: {write: boolean}): Promise<{db: Kysely<PlacementTables>; url: PlacementUrl}> {
  const target = parsePlacementUrl(url)
  if (target.engine === 'sqlite') {
    if (!fs.existsSync(target.file!)) throw new PlacementUrlError(`no Placement database at ${target.file}`)
    const raw = new SQLite(target.file!, {readonly: !options.write, fileMustExist: true})
    raw.pragma('busy_timeout = 10000')
    return {db: new Kysely<PlacementTables>({dialect: new SqliteDialect({database: raw})}), url: target}
  }
  if (target.engine === 'postgresql') {
    const pool = new pg.Pool({
      host: target.socket ?? target.host,
      port: target.port,
      user: target.user,
      password: target.password,
      database: target.database,
      max: 1,
      connectionTimeoutMillis: 10_000,
      options: options.write ? undefined : '-c default_transaction_read_only=on',
    })
    pool.on('error', () => undefined)
    return {db: new Kysely<PlacementTables>({dialect: new PostgresDialect({pool})}), url: target}
  }
  const mysql = await import('mysql2')
  const pool = mysql.createPool({
    host: target.host,
    port: target.port,
    user: target.user,
    password: target.password,
    database: target.database,
    socketPath: target.socket,
    connectionLimit: 1,
    connectTimeout: 10_000,
    // Placement's DATETIME columns hold UTC; dates come back as text, never shifted.
    dateStrings: true,
    supportBigNumbers: true,
    bigNumberStrings: false,
  })
  const db = new Kysely<PlacementTables>({dialect: new MysqlDialect({pool})})
  if (!options.write) await sql`set session transaction read only`.execute(db)
  return {db, url: target}
}

/** Starts one transaction that sees one consistent state of the whole database, on `conn`. */
export async function beginSnapshot(conn: Kysely<PlacementTables>, engine: PlacementEngine, write: boolean): Promise<void> {
  if (engine === 'postgresql') await sql.raw(`begin isolation level repeatable read${write ? '' : ' read only'}`).execute(conn)
  else if (engine === 'mysql')
    await sql.raw(write ? 'start transaction' : 'start transaction with consistent snapshot, read only').execute(conn)
  else await sql.raw(write ? 'begin immediate' : 'begin').execute(conn)
}
