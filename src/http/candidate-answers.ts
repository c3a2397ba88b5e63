/**
 * The serialized answers to GET /allocation_candidates, per app: kept until the next write
 * (ResponseCache), and, for the queries a scheduler keeps asking, worked out again right after a
 * write is answered, while the daemon waits for the next request. A scheduler claims, then asks
 * the same question again: the answer is ready for it instead of computed while it waits. Not
 * when the next write keeps coming before the question (claimers at once, a balancer sending the
 * next question to another node): that answer is thrown away unread, so a query whose answers
 * worked out ahead are seldom taken is worked out ahead only now and then, to see if they would be.
 */
import {findCandidates, type CandidateOptions} from '../core/candidates/engine.js'
import type {CandidateRequest, Microversion} from '../core/candidates/request.js'
import type {State} from '../core/state/state.js'
import type {Store} from '../store/store.js'
import {candidatesBody} from './candidates-body.js'
import type {AppOptions} from './context.js'
import {JsonStream} from './json-stream.js'
import {ResponseCache} from './response-cache.js'

/** Queries worked out ahead at most, the most recently asked. */
const AHEAD = 4
/** A query is worked out ahead once it was asked at least this often in all. */
const ASKED = 2
/** How much each answer worked out ahead, taken or not, counts in the share taken. */
const TAKEN_WEIGHT = 0.25
/** Below this share taken, a query is worked out ahead after one write in PROBE_EVERY. */
const MIN_TAKEN = 0.25
const PROBE_EVERY = 8

interface Asked {
  request: CandidateRequest
  version: Microversion
  /** Times asked in all. */
  count: number
  /** Asked since it was last worked out ahead: a query nobody asks again is not worked out again. */
  askedSince: boolean
  /** The State version it was last worked out ahead for, until an ask takes that answer or a write passes it (then null). */
  aheadAt: number | null
  /** The running share of its answers worked out ahead that an ask took before the next write. */
  taken: number
  /** Writes after which it was due but not worked out ahead (too few taken), since it last was. */
  skipped: number
}

export class CandidateAnswers {
  private readonly cache = new ResponseCache()
  /** Recently asked queries, the newest last. */
  private readonly asked = new Map<string, Asked>()
  private scheduled = false
  /** Answers worked out ahead so far. */
  workedAhead = 0

  constructor(
    private readonly options: AppOptions,
    private readonly store: Store,
  ) {}

  private get memo(): boolean {
    const o = this.options.candidates ?? {}
    // A shuffled answer must differ from call to call: never memoized.
    return !o.randomize && o.answerCache !== false
  }

  /** The answer's bytes, or pieces when it is too large to keep; `key` names the query (microversion and query string). */
  answer(state: State, key: string, request: CandidateRequest, version: Microversion): Buffer | JsonStream {
    const memo = this.memo
    const q = memo ? this.note(key, request, version) : null
    const hit = memo ? this.cache.get(state.version, key) : undefined
    if (q && q.aheadAt !== null) {
      if (hit !== undefined && q.aheadAt === state.version) this.tally(q, true)
      else if (q.aheadAt !== state.version) this.tally(q, false)
      q.aheadAt = null
    }
    if (hit !== undefined) return hit
    const body = this.compute(state, request, version)
    if (memo && !(body instanceof JsonStream)) this.cache.set(state.version, key, body)
    return body
  }

  /**
   * A write was answered: once the daemon is idle, the queries asked again and again, and asked
   * since they were last worked out ahead, are worked out for the State as it is now (nothing is
   * done when no query is asked, or the State did not move).
   */
  afterWrite(): void {
    if (this.scheduled || this.asked.size === 0 || !this.memo) return
    const due: Array<[string, Asked]> = []
    for (const [key, q] of this.asked) {
      // A write came before any ask took the answer worked out ahead.
      if (q.aheadAt !== null) {
        this.tally(q, false)
        q.aheadAt = null
      }
      if (q.count < ASKED || !q.askedSince) continue
      if (q.taken < MIN_TAKEN && ++q.skipped % PROBE_EVERY !== 0) continue
      due.push([key, q])
    }
    if (due.length === 0) return
    this.scheduled = true
    const workAhead = async () => {
      // Through refresh, as any read: it waits for a write under way and for what others committed.
      const state = await this.store.refresh().catch(() => null)
      this.scheduled = false
      if (!state) return
      for (const [key, q] of due) {
        if (this.asked.get(key) !== q || this.cache.get(state.version, key) !== undefined) continue
        q.askedSince = false
        q.skipped = 0
        this.workedAhead++
        const body = this.compute(state, q.request, q.version)
        if (body instanceof JsonStream) this.asked.delete(key)
        else {
          this.cache.set(state.version, key, body)
          q.aheadAt = state.version
        }
      }
    }
    // Idle is after the I/O already come in: a turn of the loop first, so that a request arrived
    // meanwhile, or a client in this process reading the write's answer, goes before this work.
    setImmediate(() => setImmediate(workAhead))
  }

  /** An answer worked out ahead for `q` was taken by an ask, or not. */
  private tally(q: Asked, taken: boolean): void {
    q.taken += ((taken ? 1 : 0) - q.taken) * TAKEN_WEIGHT
  }

  private compute(state: State, request: CandidateRequest, version: Microversion): Buffer | JsonStream {
    const options: CandidateOptions = this.options.candidates ?? {}
    return candidatesBody(this.options, findCandidates(state, request, options), version)
  }

  /** The query `key` was asked: counted, and made the newest asked. */
  private note(key: string, request: CandidateRequest, version: Microversion): Asked {
    let q = this.asked.get(key)
    if (q) {
      this.asked.delete(key)
      q.request = request
      q.version = version
      q.count++
      q.askedSince = true
    } else {
      q = {request, version, count: 1, askedSince: true, aheadAt: null, taken: 1, skipped: 0}
    }
    this.asked.set(key, q)
    if (this.asked.size > AHEAD) this.asked.delete(this.asked.keys().next().value!)
    return q
  }
}

const perApp = new WeakMap<AppOptions, CandidateAnswers>()

/** The answers of the app built with `options` (one per app: tests build many). */
export function candidateAnswers(options: AppOptions): CandidateAnswers {
  let answers = perApp.get(options)
  if (!answers) perApp.set(options, (answers = new CandidateAnswers(options, options.store)))
  return answers
}
