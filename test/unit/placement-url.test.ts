/**
 * Placement's database URL as placement.conf names it (SQLAlchemy's forms), read without
 * connecting: the engine, the file or server and database, the password kept out of messages.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {maskPassword, parsePlacementUrl, placementUrlOfConfig, PlacementUrlError} from '../../src/store/placement-db/connection.js'

describe("Placement's database URL", () => {
  it('reads the forms placement.conf uses', () => {
    expect(parsePlacementUrl('mysql+pymysql://placement:s%40cret@db.example:3307/placement?charset=utf8')).toEqual({
      engine: 'mysql',
      host: 'db.example',
      port: 3307,
      user: 'placement',
      password: 's@cret',
      database: 'placement',
      socket: undefined,
    })
    expect(parsePlacementUrl('mysql+pymysql://placement:x@localhost/placement?unix_socket=/run/mysqld/mysqld.sock')).toMatchObject({
      engine: 'mysql',
      socket: '/run/mysqld/mysqld.sock',
    })
    expect(parsePlacementUrl('postgresql+psycopg2://placement:x@pg/placement')).toMatchObject({
      engine: 'postgresql',
      host: 'pg',
      database: 'placement',
    })
    expect(parsePlacementUrl('postgresql://pg/placement')).toMatchObject({engine: 'postgresql', user: undefined})
    expect(parsePlacementUrl('sqlite:////var/lib/placement/placement.sqlite')).toEqual({
      engine: 'sqlite',
      file: '/var/lib/placement/placement.sqlite',
    })
    expect(parsePlacementUrl('sqlite:///placement.db')).toEqual({engine: 'sqlite', file: path.resolve('placement.db')})
  })

  it('refuses what it cannot read, without the password', () => {
    for (const bad of ['placement.db', 'oracle://u:pw@h/db', 'mysql+pymysql://u:pw@h/', 'sqlite://relative.db']) {
      expect(() => parsePlacementUrl(bad), bad).toThrow(PlacementUrlError)
      try {
        parsePlacementUrl(bad)
      } catch (err) {
        expect((err as Error).message).not.toContain(':pw@')
      }
    }
    expect(maskPassword('mysql+pymysql://placement:secret@db/placement')).toBe('mysql+pymysql://placement:***@db/placement')
  })

  it("takes placement.conf's [placement_database] connection", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-conf-'))
    try {
      const conf = path.join(dir, 'placement.conf')
      fs.writeFileSync(conf, '[DEFAULT]\ndebug = True\n[placement_database]\nconnection = mysql+pymysql://placement:x@db/placement\n')
      expect(placementUrlOfConfig(conf)).toBe('mysql+pymysql://placement:x@db/placement')
      fs.writeFileSync(conf, '[api]\nauth_strategy = keystone\n')
      expect(() => placementUrlOfConfig(conf)).toThrow(/no \[placement_database\] connection/)
    } finally {
      fs.rmSync(dir, {recursive: true, force: true})
    }
  })
})
