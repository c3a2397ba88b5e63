/**
 * Debian's OpenStack services as the tests start them: uwsgi serving a WSGI script on a free
 * loopback port, its output in a log file, waited for until it answers.
 */
import {spawn, type ChildProcess} from 'node:child_process'
import fs from 'node:fs'

/** fetch, sent again when uwsgi closed the kept-alive connection it reused (nothing was read). */
export async function fetchAgain(url: string, init?: RequestInit): Promise<Response> {
  for (let i = 0; ; i++) {
    try {
      return await globalThis.fetch(url, init)
    } catch (err) {
      if ((err as {cause?: {code?: string}}).cause?.code !== 'UND_ERR_SOCKET' || i >= 3) throw err
    }
  }
}

/**
 * uwsgi serving `wsgiFile` on 127.0.0.1:`port`, one process and one thread (these services on
 * SQLite lock with more), started when `readyUrl` answers.
 */
export async function startUwsgi(
  wsgiFile: string,
  port: number,
  env: Record<string, string>,
  log: string,
  readyUrl: string,
): Promise<ChildProcess> {
  const out = fs.openSync(log, 'a')
  const child = spawn(
    '/usr/bin/uwsgi',
    // The plain HTTP socket closes each connection after its answer: say so (Connection: close), or
    // a client that keeps connections alive (keystoneauth, the openstack command) sends its next
    // request on a closed one now and then, and gets a connection reset.
    [
      '--plugin',
      'python3',
      '--http-socket',
      `127.0.0.1:${port}`,
      '--wsgi-file',
      wsgiFile,
      '--master',
      '--processes',
      '1',
      '--threads',
      '1',
      '--die-on-term',
      '--add-header',
      'Connection: close',
    ],
    {env: {...process.env, ...env}, stdio: ['ignore', out, out]},
  )
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`uwsgi (${wsgiFile}) exited ${child.exitCode}; see ${log}`)
    const up = await fetchAgain(readyUrl).then(
      (r) => r.status < 500,
      () => false,
    )
    if (up) return child
    if (i > 240) {
      child.kill('SIGTERM')
      throw new Error(`uwsgi (${wsgiFile}) did not answer; see ${log}`)
    }
    await new Promise((r) => setTimeout(r, 250))
  }
}

/** SIGTERM, and the exit waited for. */
export async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return
  const exited = new Promise((r) => child.once('exit', r))
  child.kill('SIGTERM')
  await exited
}
