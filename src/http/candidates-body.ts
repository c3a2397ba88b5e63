/** The JSON of a candidates answer: bytes, or pieces written as they are sent when it is large. */
import type {CandidateResult} from '../core/candidates/engine.js'
import {candidateCount, candidatesJsonPieces, renderCandidatesJson} from '../core/candidates/render.js'
import type {Microversion} from '../core/candidates/request.js'
import type {AppOptions} from './context.js'
import {JsonStream, streams} from './json-stream.js'

/** The body at `version`: streamed when its longer list (requests or summaries) is long. */
export function candidatesBody(options: AppOptions, result: CandidateResult, version: Microversion): Buffer | JsonStream {
  if (streams(options, Math.max(candidateCount(result), result.providerSummaries.length))) {
    const pieces = candidatesJsonPieces(result, version) // now: before a write can come between
    return new JsonStream(() => pieces)
  }
  return renderCandidatesJson(result, version)
}
