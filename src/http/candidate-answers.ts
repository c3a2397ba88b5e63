/**
 * The serialized answers to GET /allocation_candidates, per app: kept until the next write
 * (ResponseCache), and, for the queries a scheduler keeps asking, worked out again right after a
 * write is answered, while the daemon waits for the next request. A scheduler claims, then asks
 * the same question again: the answer is ready for it instead of computed while it waits.
 */
import {findCandidates, type CandidateOptions} from '../core/candidates/engine.js'
import type {CandidateRequest, Microversion} from '../core/candidates/request.js'
import type {State} from '../core/state.js'
import type {Store} from '../store/store.js'
import {candidatesBody} from './candidates-body.js'
import type {AppOptions} from './context.js'
import {JsonStream} from './json-stream.js'
import {ResponseCache} from './response-cache.js'

/** Queries worked out ahead at most, the most recently asked. */
const AHEAD = 4
/** A query is worked out ahead once it was asked at least this often in all. */
const ASKED = 2

interface Asked {
  request: CandidateRequest
  version: Microversion
  /** Times asked in all. */
  count: number
  /** Asked since it was last worked out ahead: a query nobody asks again is not worked out again. */
  askedSince: boolean
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
    if (memo) this.note(key, request, version)
    const hit = memo ? this.cache.get(state.version, key) : undefined
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
    this.scheduled = true
    setImmediate(async () => {
      // Through refresh, as any read: it waits for a write under way and for what others committed.
      const state = await this.store.refresh().catch(() => null)
      this.scheduled = false
      if (!state) return
      for (const [key, q] of this.asked) {
        if (q.count < ASKED || !q.askedSince || this.cache.get(state.version, key) !== undefined) continue
        q.askedSince = false
        this.workedAhead++
        const body = this.compute(state, q.request, q.version)
        if (body instanceof JsonStream) this.asked.delete(key)
        else this.cache.set(state.version, key, body)
      }
    })
  }

  private compute(state: State, request: CandidateRequest, version: Microversion): Buffer | JsonStream {
    const options: CandidateOptions = this.options.candidates ?? {}
    return candidatesBody(this.options, findCandidates(state, request, options), version)
  }

  private note(key: string, request: CandidateRequest, version: Microversion): void {
    const seen = this.asked.get(key)
    this.asked.delete(key)
    this.asked.set(key, {request, version, count: (seen?.count ?? 0) + 1, askedSince: true})
    if (this.asked.size > AHEAD) this.asked.delete(this.asked.keys().next().value!)
  }
}

const perApp = new WeakMap<AppOptions, CandidateAnswers>()

/** The answers of the app built with `options` (one per app: tests build many). */
export function candidateAnswers(options: AppOptions): CandidateAnswers {
  let answers = perApp.get(options)
  if (!answers) perApp.set(options, (answers = new CandidateAnswers(options, options.store)))
  return answers
}
