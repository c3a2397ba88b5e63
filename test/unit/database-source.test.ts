/**
 * Which database a daemon serves: --db, PLACEMAT_DB, a URL file (--db-url-file or
 * PLACEMAT_DB_FILE), placement.conf's [placement_database] connection (SQLAlchemy's URL, made
 * placemat's), the data directory's; what is said about the others never holds a password.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {chooseDatabase, DatabaseSourceError} from '../../src/daemon/database-source.js'
import {DatabaseUrlError, databaseKind, describeTarget, targetOfDatabaseUrl} from '../../src/store/target.js'

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-dbsource-'))
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))
const secret = (name: string, text: string) => {
  const f = path.join(dir, name)
  fs.writeFileSync(f, text)
  return f
}
const conf = (connection: string) => ({file: '/etc/placement/placement.conf', connection})

describe("SQLAlchemy's database URLs as placemat's", () => {
  it('PostgreSQL as it is, its driver left out; SQLite URLs as files', () => {
    expect(targetOfDatabaseUrl('postgresql://placement:pw@db:5432/placement')).toBe('postgresql://placement:pw@db:5432/placement')
    expect(targetOfDatabaseUrl('postgres://u@db/p')).toBe('postgres://u@db/p')
    expect(targetOfDatabaseUrl('postgresql+psycopg2://placement:pw@db/placement?sslmode=require')).toBe(
      'postgresql://placement:pw@db/placement?sslmode=require',
    )
    expect(targetOfDatabaseUrl('sqlite:////var/lib/placement/placement.db')).toBe('/var/lib/placement/placement.db')
    expect(targetOfDatabaseUrl('sqlite:///placement.db')).toBe(path.resolve('placement.db'))
    expect(targetOfDatabaseUrl('  postgresql://u@db/p\n')).toBe('postgresql://u@db/p')
  })

  it('MariaDB as it is, its driver left out (kolla-ansible writes mysql+pymysql://)', () => {
    expect(targetOfDatabaseUrl('mysql+pymysql://placement:pw@db:3306/placement')).toBe('mysql://placement:pw@db:3306/placement')
    expect(targetOfDatabaseUrl('mysql://placement:pw@db/placement')).toBe('mysql://placement:pw@db/placement')
    expect(targetOfDatabaseUrl('mariadb+mariadbconnector://u:pw@db/p')).toBe('mysql://u:pw@db/p')
    // Kept out of what is shown, as a PostgreSQL URL's.
    expect(describeTarget('mysql://placemat:s3cret@db:3306/placemat')).toBe('mysql://placemat:***@db:3306/placemat')
    expect(databaseKind('mysql://u@db/p')).toBe('mysql')
    expect(databaseKind('mariadb://u@db/p')).toBe('mysql')
  })

  it('refuses in-memory SQLite, other databases and what is no URL, never showing the password', () => {
    expect(() => targetOfDatabaseUrl('sqlite://')).toThrow(/in-memory/)
    expect(() => targetOfDatabaseUrl('sqlite:///:memory:')).toThrow(DatabaseUrlError)
    expect(() => targetOfDatabaseUrl('oracle://u:s3cret@db/x')).toThrow(/not oracle/)
    expect(() => targetOfDatabaseUrl('oracle://u:s3cret@db/x')).not.toThrow(/s3cret/)
    expect(() => targetOfDatabaseUrl('/var/lib/placemat.db')).toThrow(/not a database URL/)
    expect(() => targetOfDatabaseUrl('')).toThrow(/empty/)
    // placemat's own forms, where they are taken (a URL file): a file without a URL.
    expect(targetOfDatabaseUrl('/var/lib/placemat.db', {paths: true})).toBe('/var/lib/placemat.db')
  })
})

describe('the database a daemon serves', () => {
  const none = {}

  it('--db, then PLACEMAT_DB, then a URL file, then placement.conf, then the data directory', () => {
    const file = secret('db-url', 'postgresql://placemat:from-file@db/placemat\n')
    const env = {PLACEMAT_DB: '/srv/env.db', PLACEMAT_DB_FILE: file, PLACEMAT_HOME: '/srv/home'}
    const config = conf('postgresql+psycopg2://placement:from-conf@db/placement')
    expect(chooseDatabase({flag: '/srv/flag.db', urlFile: file, config}, env)).toMatchObject({target: '/srv/flag.db', from: '--db'})
    expect(chooseDatabase({urlFile: file, config}, env)).toMatchObject({target: '/srv/env.db', from: 'PLACEMAT_DB'})
    expect(chooseDatabase({urlFile: file, config}, {PLACEMAT_HOME: '/srv/home'})).toMatchObject({
      target: 'postgresql://placemat:from-file@db/placemat',
      from: `${file} (--db-url-file)`,
    })
    expect(chooseDatabase({config}, {PLACEMAT_DB_FILE: file})).toMatchObject({
      target: 'postgresql://placemat:from-file@db/placemat',
      from: `${file} (PLACEMAT_DB_FILE)`,
    })
    expect(chooseDatabase({config}, {PLACEMAT_HOME: '/srv/home'})).toMatchObject({
      target: 'postgresql://placement:from-conf@db/placement',
      from: '/etc/placement/placement.conf [placement_database] connection',
    })
    expect(chooseDatabase(none, {PLACEMAT_HOME: '/srv/home'})).toEqual({
      target: '/srv/home/placemat.db',
      from: 'the data directory',
      unused: [],
    })
  })

  it('--db-url-file over PLACEMAT_DB_FILE; the file trimmed of its newline; SQLAlchemy forms and plain files taken from it', () => {
    const a = secret('a', 'postgresql+psycopg2://u:pw@db/a\r\n')
    const b = secret('b', '/srv/b.db\n')
    expect(chooseDatabase({urlFile: a}, {PLACEMAT_DB_FILE: b}).target).toBe('postgresql://u:pw@db/a')
    expect(chooseDatabase({}, {PLACEMAT_DB_FILE: b}).target).toBe('/srv/b.db')
  })

  it('says which sources below it name another database, without their passwords', () => {
    const file = secret('c', 'postgresql://placemat:file-pw@db/placemat\n')
    const mysql = conf('mysql+pymysql://placement:conf-pw@controller/placement')
    const chosen = chooseDatabase({flag: 'postgres://placemat:flag-pw@db/other', urlFile: file, config: mysql}, {})
    expect(chosen.unused).toEqual([
      `${file} (--db-url-file) not used: --db names the database`,
      '/etc/placement/placement.conf [placement_database] connection (mysql+pymysql://placement:***@controller/placement) not used: --db names the database',
    ])
    expect(JSON.stringify(chosen.unused)).not.toMatch(/pw@/)
    // The same database named twice (as a detached daemon is told it) is not worth a word.
    expect(chooseDatabase({flag: '/srv/x.db', config: conf('sqlite:////srv/x.db')}, {}).unused).toEqual([])
    expect(chooseDatabase({config: conf('postgresql+psycopg2://u:pw@db/p')}, {PLACEMAT_DB: 'postgresql://u:pw@db/p'}).unused).toEqual([])
  })

  it('refuses a source it takes that names no usable database, naming the source', () => {
    expect(() => chooseDatabase({urlFile: path.join(dir, 'missing')}, {})).toThrow(DatabaseSourceError)
    expect(() => chooseDatabase({urlFile: path.join(dir, 'missing')}, {})).toThrow(/missing \(--db-url-file\): no such file/)
    expect(() => chooseDatabase({urlFile: secret('empty', '\n')}, {})).toThrow(/the file is empty/)
    expect(() => chooseDatabase({urlFile: secret('two', 'postgres://a/b\npostgres://c/d\n')}, {})).toThrow(/expected one line/)
    const oracle = () => chooseDatabase({config: conf('oracle://placement:s3cret@controller/placement')}, {})
    expect(oracle).toThrow(DatabaseSourceError)
    expect(oracle).toThrow(
      /^\/etc\/placement\/placement.conf \[placement_database\] connection: oracle:\/\/placement:\*\*\*@controller\/placement: placemat keeps its data in/,
    )
    expect(chooseDatabase({config: conf('mysql+pymysql://placement:s3cret@controller/placement')}, {}).target).toBe(
      'mysql://placement:s3cret@controller/placement',
    )
    expect(() => chooseDatabase({config: conf('/var/lib/placement.db')}, {})).toThrow(
      /connection: '\/var\/lib\/placement.db' is not a database URL/,
    )
    // A source below the one taken need not be usable.
    expect(chooseDatabase({flag: '/srv/x.db', urlFile: path.join(dir, 'missing')}, {}).target).toBe('/srv/x.db')
  })
})
