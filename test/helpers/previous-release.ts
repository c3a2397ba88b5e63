/**
 * The previous release of placemat, built from git history for tests that run two releases side
 * by side: a detached worktree of its commit, node_modules linked to this checkout's, and the
 * same build `npm run build` does (tsc, then the CLI bundle). Nothing is cached across runs.
 */
import {execFileSync} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {ROOT} from './cli.js'

/** placemat 0.1.0: the commit this release was made from. */
export const PREVIOUS = {release: '0.1.0', commit: '17ab878'}

/** Why the previous release cannot be built here (no git, or a history without its commit, as a shallow clone's), or null. */
export function previousReleaseMissing(): string | null {
  try {
    execFileSync('git', ['-C', ROOT, 'cat-file', '-e', `${PREVIOUS.commit}^{commit}`], {stdio: 'pipe'})
    return null
  } catch (err) {
    return `placemat ${PREVIOUS.release} (commit ${PREVIOUS.commit}) is not in this checkout's git history (${(err as Error).message.split('\n')[0]})`
  }
}

export interface PreviousRelease {
  root: string
  bin: string
  remove(): void
}

/** Builds the previous release in a temporary worktree; `remove` takes the worktree away again. */
export function buildPreviousRelease(): PreviousRelease {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-previous-'))
  const root = path.join(dir, 'tree')
  const remove = () => {
    try {
      execFileSync('git', ['-C', ROOT, 'worktree', 'remove', '--force', root], {stdio: 'pipe'})
    } catch {
      // never added, or already gone
    }
    fs.rmSync(dir, {recursive: true, force: true})
  }
  try {
    execFileSync('git', ['-C', ROOT, 'worktree', 'add', '--detach', root, PREVIOUS.commit], {stdio: 'pipe'})
    fs.symlinkSync(fs.realpathSync(path.join(ROOT, 'node_modules')), path.join(root, 'node_modules'))
    execFileSync(path.join(root, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], {cwd: root, stdio: 'pipe'})
    execFileSync(process.execPath, ['scripts/build-cli.mjs'], {cwd: root, stdio: 'pipe'})
  } catch (err) {
    remove()
    throw err
  }
  return {root, bin: path.join(root, 'bin', 'run.js'), remove}
}
