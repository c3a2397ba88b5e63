// V8's code cache for the CLI's chunks (bin/code-cache.js reads it): scripts/build-cli.mjs's last step.
import {spawnSync} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

/**
 * Made in dist/cli/code-cache by running through the bin what most commands run: oclif's start, a
 * command on a file, one on an endpoint (none answers there: the error's path is compiled too).
 * Without NODE_OPTIONS: V8 refuses a cache made under other flags.
 */
export function makeCodeCache(root, outdir) {
  const cacheDir = path.join(outdir, 'code-cache')
  fs.rmSync(cacheDir, {recursive: true, force: true})
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-code-cache-'))
  try {
    const db = path.join(scratch, 'p.db')
    const env = {...process.env, PLACEMAT_MAKE_CODE_CACHE: '1', NO_COLOR: '1'}
    delete env.NODE_OPTIONS
    for (const k of Object.keys(env)) if (k.startsWith('PLACEMAT_') && k !== 'PLACEMAT_MAKE_CODE_CACHE') delete env[k]
    for (const args of [
      ['--version'],
      ['db', 'init', '--db', db],
      ['provider', 'list', '--db', db],
      ['provider', 'list', '--url', 'http://127.0.0.1:1', '--token', 'none'],
    ])
      spawnSync(process.execPath, [path.join(root, 'bin', 'run.js'), ...args], {cwd: scratch, env, stdio: 'ignore'})
    // Every other chunk, by bin/code-cache.js too (one home for how a chunk's cache is made and named).
    const bin = JSON.stringify(path.join(root, 'bin', 'code-cache.js'))
    const rest = spawnSync(process.execPath, ['-e', `require(${bin}).cacheTheRest(${JSON.stringify(outdir)})`], {env, stdio: 'inherit'})
    if (rest.status !== 0) throw new Error('the code cache of the chunks no command ran was not made')
  } finally {
    fs.rmSync(scratch, {recursive: true, force: true})
  }
  if (!fs.existsSync(path.join(cacheDir, 'node'))) throw new Error('no code cache made (bin/code-cache.js)')
}
