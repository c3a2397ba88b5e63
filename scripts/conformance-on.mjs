#!/usr/bin/env node
// Placement's own functional tests (../shared/conformance) against a daemon on MariaDB, each YAML
// file on a new database of one throwaway mariadbd (scripts/lib/mariadb.mjs) on a free loopback
// port: node scripts/conformance-on.mjs mariadb RESULTS.json [run.py's options]. Exits with
// run.py's status; 3 when mariadb-server is not installed.
import {spawn} from 'node:child_process'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {cleanUpOnExit} from './lib/exit.mjs'
import {mariadbAvailable, startMariadb} from './lib/mariadb.mjs'

const [kind, out, ...options] = process.argv.slice(2)
if (kind !== 'mariadb' || !out) {
  process.stderr.write('usage: node scripts/conformance-on.mjs mariadb RESULTS.json [run.py options]\n')
  process.exit(2)
}
if (!mariadbAvailable) {
  process.stderr.write('mariadb-server not installed\n')
  process.exit(3)
}
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const server = await startMariadb({bufferPool: '128M'})
// On a signal there is no time to wait for a clean stop: the server goes at once.
cleanUpOnExit(
  () => server.kill(),
  (sig) => process.stderr.write(`${sig}: stopping MariaDB\n`),
)
// scripts/conformance-db/bin/run.js makes each server's database on this one.
const shared = path.join(root, '..', 'shared', 'conformance')
const serverCmd = `PLACEMAT_ROOT=${root}/scripts/conformance-db bash ${shared}/start-placemat.sh {dir} {port}`
const runner = spawn('python3', [path.join(shared, 'run.py'), '--server-cmd', serverCmd, '--json', out, ...options], {
  cwd: root,
  stdio: 'inherit',
  env: {...process.env, PLACEMAT_TEST_DB: `mysql://root@127.0.0.1:${server.port}/`},
})
const code = await new Promise((resolve) => runner.on('exit', (c) => resolve(c ?? 1)))
await server.stop()
process.exit(code)
