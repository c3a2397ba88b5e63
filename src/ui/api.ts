/**
 * The page's calls to its daemon: placemat's API beside the page (../v1/, so behind a balancer's
 * prefix it is the prefix's), the token in X-Auth-Token as every API call sends it, and the ETag
 * of the last answer in If-None-Match (304: nothing changed, nothing sent). The token lives in the
 * tab's session storage only.
 */

/** The daemon cannot be reached, or answers that it cannot serve now (starting, stopping, behind a balancer without it). */
export class Unreachable extends Error {}

/** The token was refused (401), or may not read placemat's API (403). */
export class Refused extends Error {
  constructor(
    readonly status: number,
    detail: string,
  ) {
    super(detail)
  }
}

/** Any other refusal, with Placement's error detail. */
export class Answered extends Error {
  constructor(
    readonly status: number,
    detail: string,
  ) {
    super(detail)
  }
}

export interface Fetched<T> {
  body: T
  etag: string | null
}

const TOKEN = 'placemat-token'

export const storedToken = (): string | null => sessionStorage.getItem(TOKEN)
export const storeToken = (token: string): void => sessionStorage.setItem(TOKEN, token)
export const forgetToken = (): void => sessionStorage.removeItem(TOKEN)

/** An answer of the API at `path` (below /placemat/v1/): null when the answer held under `etag` is still the one. */
export async function getJson<T>(path: string, token: string, etag: string | null): Promise<Fetched<T> | null> {
  const headers: Record<string, string> = {'x-auth-token': token, accept: 'application/json'}
  if (etag) headers['if-none-match'] = etag
  let res: Response
  try {
    res = await fetch(new URL(`../v1/${path}`, document.baseURI), {headers, cache: 'no-store', credentials: 'omit'})
  } catch (err) {
    throw new Unreachable((err as Error).message)
  }
  if (res.status === 304) return null
  if (res.ok) return {body: (await res.json()) as T, etag: res.headers.get('etag')}
  const detail = await errorDetail(res)
  if (res.status === 401 || res.status === 403) throw new Refused(res.status, detail)
  if (res.status === 502 || res.status === 503 || res.status === 504) throw new Unreachable(detail)
  throw new Answered(res.status, detail)
}

/** Placement's error detail of an answer, or its status. */
async function errorDetail(res: Response): Promise<string> {
  try {
    const body = (await res.json()) as {errors?: Array<{detail?: string}>}
    // Placement words a detail as its title's sentence, an empty line and the detail itself.
    const detail = body.errors?.[0]?.detail?.split('\n\n').pop()?.trim()
    return detail || `${res.status} ${res.statusText}`
  } catch {
    return `${res.status} ${res.statusText}`
  }
}
