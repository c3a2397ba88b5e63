/**
 * Claim churn as a scheduler makes it, for tests that change the nodes under it: workers that ask
 * for candidates (GET /allocation_candidates) and claim one (PUT /allocations/{consumer}, a new
 * consumer each time, consumer_generation null, microversion 1.39), and now and then release what
 * they hold (DELETE). Every answer is counted by status; what a PUT answered 204 and was never
 * released is what the database must hold at the end.
 *
 * With `followUps`, a claim just acknowledged is at once resized (PUT with consumer_generation 1)
 * or released, as nova does when its next call lands on another API node: on the next node of
 * `url` when it names several, else wherever the balancer sends it. A follow-up refused as if the
 * claim were not there (404, or 409 "consumer generation conflict") was decided on a State older
 * than the acknowledged claim: it is counted stale.
 */
import {randomUUID} from 'node:crypto'
import {OUTCOME_UNKNOWN} from '../../src/store/database-faults.js'
import {RESENT_AFTER_LOST} from './balancer.js'

const HEADERS = {
  'x-auth-token': 'admin',
  'openstack-api-version': 'placement 1.39',
  'content-type': 'application/json',
  accept: 'application/json',
}

/** A claim a PUT answered 204: the consumer's allocations, provider -> class -> amount. */
export type Claim = Record<string, Record<string, number>>

export interface ChurnReport {
  /** Answers by status. */
  statuses: Record<number, number>
  /** Answers other than 2xx, 409 and 503, each as `METHOD path -> status body`. */
  unexpected: string[]
  /** Claims acknowledged (204) and not released. */
  held: Map<string, Claim>
  /** Consumers whose release was not acknowledged, or whose claim may have been kept (503 saying so): what they hold is not known. */
  unsure: Set<string>
  /** When each 2xx answer came (ms), in order. */
  successes: number[]
  /** Follow-ups sent (a resize or release right after the claim's acknowledgement). */
  followUps: number
  /** Follow-ups refused as if the acknowledged claim were not there, each with when it was answered (ms). */
  stale: Array<{at: number; what: string}>
  /** The slowest answer (or network error), ms, and what it was. */
  slowest: {ms: number; what: string}
  /** The 503s by what they said: their title, and whether the change may have been kept. */
  unavailable: Record<string, number>
}

export interface Churn {
  report: ChurnReport
  /** Stops the workers once their requests in flight are answered. */
  stop(): Promise<ChurnReport>
}

export interface ChurnOptions {
  workers?: number
  resources?: string
  pauseMs?: number
  /** The share of acknowledged claims resized or released at once (0 to 1; 0 when not given). */
  followUps?: number
}

export function startChurn(url: string | string[], opts: ChurnOptions = {}): Churn {
  const resources = opts.resources ?? 'VCPU:1,MEMORY_MB:512'
  const report: ChurnReport = {
    statuses: {},
    unexpected: [],
    held: new Map(),
    unsure: new Set(),
    successes: [],
    followUps: 0,
    stale: [],
    slowest: {ms: 0, what: ''},
    unavailable: {},
  }
  const urls = Array.isArray(url) ? url : [url]
  let stopped = false
  /** One request; `followUp`: a resize or release right after the claim, whose refusal as if the claim were not there is stale. */
  const call = async (
    method: string,
    path: string,
    body?: unknown,
    on = urls[0],
    followUp = false,
  ): Promise<{status: number; json: any}> => {
    let status = 0
    let text = ''
    let resent = false
    const sentAt = performance.now()
    try {
      const res = await fetch(on + path, {method, headers: HEADERS, body: body === undefined ? undefined : JSON.stringify(body)})
      status = res.status
      text = await res.text()
      resent = res.headers.has(RESENT_AFTER_LOST)
    } catch (err) {
      text = (err as Error).message
    }
    const ms = performance.now() - sentAt
    if (ms > report.slowest.ms) report.slowest = {ms, what: `${method} ${path} -> ${status}`}
    report.statuses[status] = (report.statuses[status] ?? 0) + 1
    // A release the balancer sent again after losing a node's connection may find it done already.
    const doneBefore = method === 'DELETE' && status === 404 && resent
    const stale = followUp && !resent && (status === 404 || (status === 409 && text.includes('consumer generation conflict')))
    if (status >= 200 && status < 300) report.successes.push(Date.now())
    else if (stale) report.stale.push({at: Date.now(), what: `${method} ${path} -> ${status} ${text.slice(0, 300)}`})
    else if (status !== 409 && status !== 503 && !doneBefore) report.unexpected.push(`${method} ${path} -> ${status} ${text.slice(0, 300)}`)
    let json: unknown = null
    try {
      json = text ? JSON.parse(text) : null
    } catch {
      // not JSON: counted above
    }
    if (status === 503) {
      const error = (json as {errors?: Array<{title?: string}>} | null)?.errors?.[0]
      const kind = `${error?.title ?? 'no title'}${outcomeUnknown(json) ? ' (may or may not have been kept)' : ''}`
      report.unavailable[kind] = (report.unavailable[kind] ?? 0) + 1
    }
    return {status, json}
  }
  const release = async (mine: string[]) => {
    const consumer = mine.splice(Math.floor(Math.random() * mine.length), 1)[0]
    const r = await call('DELETE', `/allocations/${consumer}`, undefined, urls[Math.floor(Math.random() * urls.length)])
    report.held.delete(consumer)
    if (r.status !== 204) report.unsure.add(consumer)
  }
  /** The claim just acknowledged on node `from`, resized or released at once on the next node. */
  const followUp = async (consumer: string, claim: Claim, from: number, mine: string[]) => {
    report.followUps++
    const on = urls[(from + 1) % urls.length]
    if (Math.random() < 0.5) {
      const r = await call('DELETE', `/allocations/${consumer}`, undefined, on, true)
      mine.splice(mine.indexOf(consumer), 1)
      report.held.delete(consumer)
      if (r.status !== 204 && r.status !== 404) report.unsure.add(consumer)
      else if (r.status === 404) report.held.set(consumer, claim) // refused: still held
      return
    }
    // A resize: one more MEMORY_MB on each provider (capacity may refuse it: then it holds what it held).
    const bigger = Object.fromEntries(Object.entries(claim).map(([rp, r]) => [rp, {...r, MEMORY_MB: (r.MEMORY_MB ?? 0) + 1}]))
    const r = await call(
      'PUT',
      `/allocations/${consumer}`,
      {
        allocations: Object.fromEntries(Object.entries(bigger).map(([rp, resources]) => [rp, {resources}])),
        project_id: 'churn-project',
        user_id: 'churn-user',
        consumer_generation: 1,
        consumer_type: 'INSTANCE',
      },
      on,
      true,
    )
    if (r.status === 204) report.held.set(consumer, bigger)
    else if (r.status !== 409) report.unsure.add(consumer)
  }
  const worker = async () => {
    const mine: string[] = []
    while (!stopped) {
      if (mine.length && Math.random() < 0.3) await release(mine)
      else {
        const node = Math.floor(Math.random() * urls.length)
        const c = await call('GET', `/allocation_candidates?resources=${resources}&limit=10`, undefined, urls[node])
        const requests = (c.json?.allocation_requests ?? []) as Array<{allocations: Record<string, {resources: Record<string, number>}>}>
        if (c.status === 200 && requests.length) {
          const pick = requests[Math.floor(Math.random() * requests.length)]
          const consumer = randomUUID()
          const r = await call(
            'PUT',
            `/allocations/${consumer}`,
            {
              allocations: pick.allocations,
              project_id: 'churn-project',
              user_id: 'churn-user',
              consumer_generation: null,
              consumer_type: 'INSTANCE',
            },
            urls[node],
          )
          if (r.status === 204) {
            const claim = Object.fromEntries(Object.entries(pick.allocations).map(([rp, a]) => [rp, a.resources]))
            report.held.set(consumer, claim)
            mine.push(consumer)
            if (Math.random() < (opts.followUps ?? 0)) await followUp(consumer, claim, node, mine)
          } else if (r.status === 503 && outcomeUnknown(r.json)) report.unsure.add(consumer) // its COMMIT was on its way
        } else if (c.status === 200 && mine.length) await release(mine)
      }
      await new Promise((r) => setTimeout(r, opts.pauseMs ?? 5))
    }
  }
  const running = Array.from({length: opts.workers ?? 4}, () => worker())
  return {
    report,
    async stop() {
      stopped = true
      await Promise.all(running)
      return report
    },
  }
}

/** The longest time between two successive 2xx answers (ms). */
export function longestGap(successes: number[]): number {
  const t = [...successes].sort((a, b) => a - b)
  let gap = 0
  for (let i = 1; i < t.length; i++) gap = Math.max(gap, t[i] - t[i - 1])
  return gap
}

/** Whether a 503 says the write may have been kept (its connection was lost during COMMIT). */
function outcomeUnknown(body: unknown): boolean {
  const errors = (body as {errors?: Array<{detail?: string}>} | null)?.errors
  return errors?.some((e) => e.detail?.includes(OUTCOME_UNKNOWN)) ?? false
}

/**
 * What a database holds against what churn's writers were told: `rows` are its allocations
 * (consumer, provider, class, used) as text; each consumer's claim, each provider's VCPU used, and
 * the claims' canonical form to compare.
 */
export function heldFromRows(rows: string[][]): {
  held: Map<string, Claim>
  usedVcpu: Map<string, number>
  canonical: (claim?: Claim) => string
} {
  const held = new Map<string, Claim>()
  const usedVcpu = new Map<string, number>()
  for (const [consumer, provider, rc, used] of rows) {
    const c = held.get(consumer) ?? {}
    ;(c[provider] ??= {})[rc] = Number(used)
    held.set(consumer, c)
    if (rc === 'VCPU') usedVcpu.set(provider, (usedVcpu.get(provider) ?? 0) + Number(used))
  }
  const canonical = (claim?: Claim) =>
    JSON.stringify(
      Object.entries(claim ?? {})
        .sort()
        .map(([p, r]) => [p, Object.entries(r).sort()]),
    )
  return {held, usedVcpu, canonical}
}
