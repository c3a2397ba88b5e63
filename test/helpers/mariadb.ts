/**
 * A throwaway MariaDB (Debian's mariadb-server), Placement's usual database: its own data folder,
 * socket and loopback port, no grant tables (any user gets in), stopped and removed after.
 * `mariadbAvailable` is false (and the tests that need it are skipped, saying so) where it is not
 * installed.
 */
import {execFile, spawn, type ChildProcess} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {promisify} from 'node:util'
import {freePort, stopChild} from './uwsgi.js'

const run = promisify(execFile)

export const mariadbAvailable = ['/usr/bin/mariadb-install-db', '/usr/sbin/mariadbd', '/usr/bin/mariadb'].every((f) => fs.existsSync(f))

export interface TestMariadb {
  /** SQLAlchemy's URL (as placement.conf has it) of a new, empty database. */
  database(name: string): Promise<string>
  /** placemat's URL (mysql://) of a new, empty database of its own name. */
  placematDatabase(): Promise<string>
  stop(): Promise<void>
}

export async function startMariadb(): Promise<TestMariadb> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-mariadb-'))
  const user = os.userInfo().username
  await run('/usr/bin/mariadb-install-db', [
    '--no-defaults',
    `--datadir=${dir}/data`,
    `--user=${user}`,
    '--auth-root-authentication-method=normal',
    '--skip-test-db',
  ])
  const port = await freePort()
  const socket = path.join(dir, 'sock')
  const log = fs.openSync(path.join(dir, 'log'), 'a')
  const child: ChildProcess = spawn(
    '/usr/sbin/mariadbd',
    [
      '--no-defaults',
      `--datadir=${dir}/data`,
      `--socket=${socket}`,
      `--port=${port}`,
      '--bind-address=127.0.0.1',
      `--user=${user}`,
      '--skip-grant-tables',
      '--skip-log-bin',
      '--innodb-buffer-pool-size=64M',
      `--pid-file=${dir}/pid`,
    ],
    {stdio: ['ignore', log, log]},
  )
  const client = (sqlText: string) => run('/usr/bin/mariadb', ['--no-defaults', '-S', socket, '-e', sqlText])
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`mariadbd exited ${child.exitCode}; see ${dir}/log`)
    if (
      await client('select 1').then(
        () => true,
        () => false,
      )
    )
      break
    if (i > 120) throw new Error(`mariadbd did not start; see ${dir}/log`)
    await new Promise((r) => setTimeout(r, 250))
  }
  let databases = 0
  return {
    async database(name) {
      await client(`create database ${name} character set utf8mb4`)
      return `mysql+pymysql://placement:secret@127.0.0.1:${port}/${name}?charset=utf8`
    },
    async placematDatabase() {
      const name = `placemat_${++databases}`
      await client(`create database ${name}`)
      return `mysql://placemat@127.0.0.1:${port}/${name}`
    },
    async stop() {
      await stopChild(child)
      fs.rmSync(dir, {recursive: true, force: true})
    },
  }
}
