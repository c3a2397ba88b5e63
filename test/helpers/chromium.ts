/**
 * Debian's chromium, headless, for the map page's tests: the DOM after the page's scripts ran
 * (`--dump-dom`, with a virtual time budget so the page's own requests are answered before the
 * dump), a screenshot (`--screenshot`), and a browser driven over the DevTools protocol on a pipe
 * (`--remote-debugging-pipe`: no port, no package) for what takes real time: a page that polls
 * through a daemon's restart, frames timed in the page. Undefined CHROMIUM: not installed here.
 */
import {spawn, type ChildProcess} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

export const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => fs.existsSync(p))

/** What every run is started with: headless, no sandbox (tests run as root in containers), no first-run chores, a profile of its own. */
function commonArgs(profile: string, width: number, height: number): string[] {
  return [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--hide-scrollbars',
    '--no-first-run',
    '--no-default-browser-check',
    '--disable-extensions',
    '--disable-background-networking',
    '--disable-sync',
    `--user-data-dir=${profile}`,
    `--window-size=${width},${height}`,
  ]
}

/** Runs chromium once with `args` (after the common ones): its stdout. */
function once(args: string[], width: number, height: number, ms = 120_000): Promise<string> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-chromium-'))
  return new Promise((resolve, reject) => {
    const child = spawn(CHROMIUM!, [...commonArgs(profile, width, height), ...args], {stdio: ['ignore', 'pipe', 'pipe']})
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), ms)
    child.once('exit', (code) => {
      clearTimeout(timer)
      fs.rmSync(profile, {recursive: true, force: true})
      if (code === 0) resolve(out)
      else reject(new Error(`chromium exited ${code}: ${err.split('\n').slice(-5).join('\n')}`))
    })
  })
}

/** The page's DOM once its scripts ran and its requests were answered (`budgetMs` of the page's virtual time). */
export function dumpDom(url: string, opts: {budgetMs?: number; width?: number; height?: number; args?: string[]} = {}): Promise<string> {
  return once(
    [...(opts.args ?? []), `--virtual-time-budget=${opts.budgetMs ?? 3000}`, '--dump-dom', url],
    opts.width ?? 1400,
    opts.height ?? 900,
  )
}

/** A screenshot of the page once drawn, written to `file` (PNG). */
export async function screenshot(
  url: string,
  file: string,
  opts: {budgetMs?: number; width?: number; height?: number} = {},
): Promise<void> {
  await once([`--virtual-time-budget=${opts.budgetMs ?? 3000}`, `--screenshot=${file}`, url], opts.width ?? 1400, opts.height ?? 900)
  if (!fs.existsSync(file)) throw new Error(`chromium wrote no screenshot to ${file}`)
}

/** Each element of a dumped DOM that carries data-level, with its attributes and the text of its value. */
export interface DumpedBox {
  attrs: Record<string, string>
  value: string | null
}

const ENTITIES: Record<string, string> = {amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", nbsp: '\u00a0'}
const decodeEntities = (s: string) => s.replace(/&(amp|lt|gt|quot|#39|nbsp);/g, (_, e: string) => ENTITIES[e])

/** The elements of `html` with a data-level attribute, in document order: their attributes and the text of their first `.value` (boxes only). */
export function boxesOf(html: string): DumpedBox[] {
  const out: DumpedBox[] = []
  const tag = /<(div|section)\s([^>]*\bdata-level="[^"]*"[^>]*)>/g
  for (let m = tag.exec(html); m; m = tag.exec(html)) {
    const attrs: Record<string, string> = {}
    for (const a of m[2].matchAll(/([\w:-]+)(?:="([^"]*)")?/g)) attrs[a[1]] = decodeEntities(a[2] ?? '')
    const rest = html.slice(m.index + m[0].length, m.index + m[0].length + 2000)
    const value = attrs.role === 'treeitem' ? (/<span class="value">([^<]*)<\/span>/.exec(rest)?.[1] ?? null) : null
    out.push({attrs, value: value === null ? null : decodeEntities(value)})
  }
  return out
}

/** A browser driven over the DevTools protocol on a pipe. */
export class Browser {
  private next = 0
  private readonly waiting = new Map<number, {resolve: (v: any) => void; reject: (e: Error) => void}>()
  private buffer = ''

  private constructor(
    private readonly child: ChildProcess,
    private readonly profile: string,
  ) {
    const input = child.stdio[4] as NodeJS.ReadableStream
    input.setEncoding('utf8')
    input.on('data', (chunk: string) => {
      this.buffer += chunk
      for (let at = this.buffer.indexOf('\0'); at >= 0; at = this.buffer.indexOf('\0')) {
        const message = JSON.parse(this.buffer.slice(0, at))
        this.buffer = this.buffer.slice(at + 1)
        const w = message.id === undefined ? undefined : this.waiting.get(message.id)
        if (!w) continue
        this.waiting.delete(message.id)
        if (message.error) w.reject(new Error(`${message.error.message}: ${message.error.data ?? ''}`))
        else w.resolve(message.result)
      }
    })
  }

  static launch(width = 1400, height = 900): Browser {
    const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-chromium-'))
    const child = spawn(CHROMIUM!, [...commonArgs(profile, width, height), '--remote-debugging-pipe', 'about:blank'], {
      stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'],
    })
    return new Browser(child, profile)
  }

  /** A DevTools command (to a page when `session` is given), answered with its result. */
  send(method: string, params: Record<string, unknown> = {}, session?: string): Promise<any> {
    const id = ++this.next
    const out = this.child.stdio[3] as NodeJS.WritableStream
    return new Promise((resolve, reject) => {
      this.waiting.set(id, {resolve, reject})
      out.write(`${JSON.stringify({id, method, params, ...(session ? {sessionId: session} : {})})}\0`)
    })
  }

  /** A new tab at `url`, at `width` x `height`. */
  async open(url: string, width = 1400, height = 900): Promise<Tab> {
    const {targetId} = await this.send('Target.createTarget', {url: 'about:blank'})
    const {sessionId} = await this.send('Target.attachToTarget', {targetId, flatten: true})
    const tab = new Tab(this, sessionId)
    await this.send('Emulation.setDeviceMetricsOverride', {width, height, deviceScaleFactor: 1, mobile: false}, sessionId)
    await this.send('Page.navigate', {url}, sessionId)
    return tab
  }

  async close(): Promise<void> {
    const exited = new Promise((r) => this.child.once('exit', r))
    this.send('Browser.close').catch(() => {})
    const kill = setTimeout(() => this.child.kill('SIGKILL'), 5000)
    await exited
    clearTimeout(kill)
    fs.rmSync(this.profile, {recursive: true, force: true})
  }
}

export class Tab {
  constructor(
    private readonly browser: Browser,
    private readonly session: string,
  ) {}

  /** The value of a JavaScript expression in the page (a promise awaited). */
  async eval<T = unknown>(expression: string): Promise<T> {
    const r = await this.browser.send('Runtime.evaluate', {expression, awaitPromise: true, returnByValue: true}, this.session)
    if (r.exceptionDetails) throw new Error(`in the page: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`)
    return r.result.value as T
  }

  /** Waits until `expression` is true in the page (polled every 50 ms). */
  async until(expression: string, what: string, ms = 60_000): Promise<void> {
    const end = Date.now() + ms
    while (Date.now() < end) {
      if (await this.eval<boolean>(`Boolean(${expression})`).catch(() => false)) return
      await new Promise((r) => setTimeout(r, 50))
    }
    throw new Error(`timed out waiting for ${what}`)
  }

  /** The page's DOM as it is now. */
  html(): Promise<string> {
    return this.eval<string>('document.documentElement.outerHTML')
  }

  /** A screenshot of what the window shows, written to `file`. */
  async screenshot(file: string): Promise<void> {
    const {data} = await this.browser.send('Page.captureScreenshot', {format: 'png'}, this.session)
    fs.writeFileSync(file, Buffer.from(data, 'base64'))
  }
}
