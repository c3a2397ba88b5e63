/**
 * The map page's files, GET /placemat/ui/ and /placemat/ui/FILE: served without a token, for
 * they hold no data (every number the page draws comes from /placemat/v1/map, which needs one).
 * The page is ui/index.html and ui/map.css of the package, and its scripts, compiled from src/ui
 * by the build (dist/src/ui/*.js): no other file is ever served from here, nothing from the
 * network. Each answer forbids everything but its own origin's scripts, styles and API calls
 * (Content-Security-Policy: no inline script or style, no frames, no forms sent anywhere) and is
 * revalidated by its ETag.
 */
import {createHash} from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {PlacementError} from '../../core/errors.js'
import type {Ctx, RouteDef} from '../context.js'

export const UI_PREFIX = '/placemat/ui'

/** What every file of the page is served with. */
export const UI_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
  "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
}

/** The package's root: the nearest folder above this module holding ui/index.html (the sources' or the built package's). */
function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url))
  for (;;) {
    if (fs.existsSync(path.join(dir, 'ui', 'index.html')) && fs.existsSync(path.join(dir, 'package.json'))) return dir
    const up = path.dirname(dir)
    if (up === dir) throw new Error('the map page (ui/index.html) is not in this package')
    dir = up
  }
}

interface PageFile {
  body: Buffer
  type: string
  etag: string
}

/** The files served, by name: read once, on the first request for one. */
let files: Map<string, PageFile> | undefined

/** The page's files: ui/*.html and *.css, and the compiled scripts; a name is letters, digits and dashes and its extension. */
export function pageFiles(): Map<string, PageFile> {
  if (files) return files
  const root = packageRoot()
  const out = new Map<string, PageFile>()
  const add = (dir: string, ext: string[]) => {
    if (!fs.existsSync(dir)) return
    for (const name of fs.readdirSync(dir).sort()) {
      const extension = path.extname(name)
      if (!ext.includes(extension) || !/^[a-z0-9-]+\.[a-z]+$/.test(name)) continue
      const body = fs.readFileSync(path.join(dir, name))
      out.set(name, {body, type: TYPES[extension], etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`})
    }
  }
  add(path.join(root, 'ui'), ['.html', '.css'])
  add(path.join(root, 'dist', 'src', 'ui'), ['.js'])
  files = out
  return out
}

function send(ctx: Ctx, name: string): undefined {
  const file = pageFiles().get(name)
  if (!file) throw new PlacementError(404, `The map page has no file ${name}.`)
  const reply = ctx.reply
  reply.header('content-security-policy', UI_CSP)
  reply.header('x-content-type-options', 'nosniff')
  reply.header('referrer-policy', 'no-referrer')
  reply.header('x-frame-options', 'DENY')
  reply.header('cache-control', 'no-cache')
  reply.header('etag', file.etag)
  const asked = ctx.req.headers['if-none-match']
  if (typeof asked === 'string' && asked.split(',').some((t) => t.trim() === file.etag)) {
    reply.code(304).send()
    return undefined
  }
  reply.header('content-type', file.type)
  reply.send(file.body)
  return undefined
}

const page = {method: 'GET', public: true, anyAccept: true} as const

export const routes: RouteDef[] = [
  {
    ...page,
    url: UI_PREFIX,
    // The page's files are named relative to it: it must be asked as a folder (behind a prefix too).
    handler(ctx) {
      const query = ctx.req.url.indexOf('?')
      ctx.reply
        .code(301)
        .header('location', `ui/${query < 0 ? '' : ctx.req.url.slice(query)}`)
        .send()
      return undefined
    },
  },
  {...page, url: `${UI_PREFIX}/`, handler: (ctx) => send(ctx, 'index.html')},
  {...page, url: `${UI_PREFIX}/:file`, handler: (ctx) => send(ctx, ctx.params.file)},
]
