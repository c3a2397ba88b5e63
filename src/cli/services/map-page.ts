/**
 * `placemat ui`: the address of the map page (/placemat/ui/) of the daemon the command talks to,
 * with its token in the fragment (`#token=...`: a browser never sends a fragment, and the page
 * moves it to the tab's session storage), and, asked to, that address opened in a browser.
 */
import {spawn} from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import type {Endpoint} from '../backend/backend.js'
import {pageAddress} from '../backend/page-address.js'

export interface MapPage {
  url: string
  /** With --open: the program that opened it, or null where there is none. */
  opened?: string | null
}

/** The page's address: the daemon's, its base path kept, the token in the fragment. */
export function mapPageUrl(base: string, token: string | undefined): string {
  const url = `${base.replace(/\/+$/, '')}/placemat/ui/`
  return token ? `${url}#token=${encodeURIComponent(token)}` : url
}

export async function mapPage(endpoint: Endpoint, opts: {open?: boolean} = {}): Promise<MapPage> {
  const {url: base, token} = await pageAddress(endpoint)
  const url = mapPageUrl(base, token)
  if (!opts.open) return {url}
  const opener = browserOpener()
  if (opener)
    spawn(opener, [url], {stdio: 'ignore', detached: true})
      .on('error', () => {})
      .unref()
  return {url, opened: opener}
}

/** The program that opens a URL in the user's browser: `open` on macOS, xdg-open elsewhere, when it is on the PATH. */
export function browserOpener(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string | null {
  const name = platform === 'darwin' ? 'open' : 'xdg-open'
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue
    const candidate = path.join(dir, name)
    try {
      fs.accessSync(candidate, fs.constants.X_OK)
      return candidate
    } catch {
      // not here
    }
  }
  return null
}
