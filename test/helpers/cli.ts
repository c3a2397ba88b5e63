/** Running the real `placemat` binary from tests, in a clean environment. */
import {execFile} from 'node:child_process'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))
export const BIN = path.join(ROOT, 'bin', 'run.js')

export interface Result {
  code: number
  stdout: string
  stderr: string
}

const INHERITED = ['PLACEMAT_URL', 'PLACEMAT_DB', 'PLACEMAT_TOKEN', 'OS_TOKEN', 'FORCE_COLOR', 'PLACEMAT_TEST_PAUSE_IN_TX']

/** The test process's environment without anything that would point the CLI elsewhere; `extra` wins. */
export const childEnv = (extra: Record<string, string> = {}) => {
  const env: NodeJS.ProcessEnv = {...process.env, NO_COLOR: '1', ...extra}
  for (const k of INHERITED) if (!(k in extra)) delete env[k]
  // An OpenStack environment of the machine (OS_CLOUD, OS_AUTH_URL, ...) would send the CLI to a cloud.
  for (const k of Object.keys(env)) if (k.startsWith('OS_') && !(k in extra)) delete env[k]
  return env
}

/** Runs `placemat ARGS` (or another script of the repository) and resolves with its exit code and output. */
export function placemat(args: string[], opts: {input?: string; env?: Record<string, string>; script?: string} = {}): Promise<Result> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [opts.script ?? BIN, ...args],
      {cwd: ROOT, env: childEnv(opts.env), maxBuffer: 64 << 20},
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as any).code === 'number' ? (err as any).code : 1) : 0
        resolve({code, stdout, stderr})
      },
    )
    child.stdin!.end(opts.input)
  })
}
