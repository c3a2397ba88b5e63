/**
 * Podman and buildah in a sandbox of their own for a test: a storage root and runroot in a temp
 * folder (vfs, which needs no overlay support), a containers.conf the sandbox writes (runc, no
 * default ulimits, cgroupfs, events in a file), so a test neither reads nor fills the machine's
 * image store. Every container the sandbox starts is named, and `dispose()` removes each by name
 * (a container outlives the `podman run` that started it) before the folder goes.
 */
import {execFile} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const onPath = (tool: string) => (process.env.PATH ?? '').split(':').some((d) => d && fs.existsSync(path.join(d, tool)))

/** The tools a container test needs that are missing here (apt-get install podman buildah runc). */
export const missingContainerTools = ['podman', 'buildah', 'runc'].filter((t) => !onPath(t))

export interface Ran {
  code: number
  stdout: string
  stderr: string
}

export interface Sandbox {
  dir: string
  /** The variables that point podman and buildah at this sandbox's configuration and storage. */
  env: NodeJS.ProcessEnv
  /** Runs podman (or `tool`) with the sandbox's environment plus `env`; never throws on an exit code. */
  run(args: string[], opts?: {env?: NodeJS.ProcessEnv; tool?: string; timeoutMs?: number}): Promise<Ran>
  /** A name for a new container, removed by dispose(). */
  containerName(): string
  dispose(): Promise<void>
}

export function podmanSandbox(prefix = 'placemat-podman-'): Sandbox {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  const storageConf = path.join(dir, 'storage.conf')
  const containersConf = path.join(dir, 'containers.conf')
  fs.mkdirSync(path.join(dir, 'tmp'))
  fs.writeFileSync(storageConf, `[storage]\ndriver = "vfs"\ngraphroot = "${dir}/root"\nrunroot = "${dir}/run"\n`)
  fs.writeFileSync(
    containersConf,
    [
      '[containers]',
      'default_ulimits = []',
      '[engine]',
      'runtime = "runc"',
      'cgroup_manager = "cgroupfs"',
      'events_logger = "file"',
      `tmp_dir = "${dir}/tmp"`,
      '',
    ].join('\n'),
  )
  const env = {CONTAINERS_CONF: containersConf, CONTAINERS_STORAGE_CONF: storageConf, TMPDIR: path.join(dir, 'tmp')}
  const names: string[] = []
  const run: Sandbox['run'] = (args, opts = {}) =>
    new Promise((resolve) => {
      execFile(
        opts.tool ?? 'podman',
        args,
        {env: {...process.env, ...env, ...opts.env}, maxBuffer: 64 * 1024 * 1024, timeout: opts.timeoutMs ?? 600_000},
        (err, stdout, stderr) => {
          const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0
          resolve({code, stdout: String(stdout), stderr: String(stderr)})
        },
      )
    })
  return {
    dir,
    env,
    run,
    containerName() {
      const name = `placemat-test-${process.pid}-${names.length + 1}`
      names.push(name)
      return name
    },
    async dispose() {
      for (const name of names) await run(['rm', '--force', '--time', '0', '--volumes', '--ignore', name])
      fs.rmSync(dir, {recursive: true, force: true})
    },
  }
}
