/**
 * `placemat topology apply LAYOUT`: the racks, rows, rooms and their hosts put where a layout file
 * says, by the backend (placemat: one transaction at the topology's generation; plain Placement:
 * each host's aggregates). A file that would change nothing without --prune is refused before
 * anything is asked; the error an apply ends with says what to do about it.
 */
import {ApiError} from '../../client/client.js'
import {layoutNodes, type TopologyPlan} from '../../core/topology.js'
import {APPLY_KEYS} from '../apply/apply-file.js'
import type {Backend, LayoutApplyResult, Progress} from '../backend/backend.js'
import {usageError, withContext} from '../failure.js'
import {ALLOW_HINT, isGroupViolation} from '../groups/flags.js'
import {layoutBody, readLayoutFile, type LayoutDoc} from '../topology/layout-file.js'

export interface TopologyApplyOptions {
  dryRun?: boolean
  prune?: boolean
  /** Apply only if the topology is still at this generation (else the file's own, if it has one). */
  generation?: number
  /** Plain Placement, with prune: the layout file applied before. */
  previous?: string
  concurrency?: number
  allowViolations?: boolean
  /** The plan, before anything is applied, with the layout it was made from. */
  onPlan?: (plan: TopologyPlan, layout: LayoutDoc) => void
  onProgress?: Progress
}

export interface TopologyApplyOutcome {
  res: LayoutApplyResult
  seconds: number
  /** A dry run's: the error the apply would end with, in words that say what to do about it. */
  refusal?: ApiError
}

/** Applies the layout `file` holds (a datacenter's one file too: its layout part). */
export async function applyLayoutFile(
  backendOf: () => Promise<Backend>,
  file: string,
  opts: TopologyApplyOptions = {},
): Promise<TopologyApplyOutcome> {
  const doc = readLayoutFile(file, {skipKeys: APPLY_KEYS})
  if (!opts.prune && layoutNodes(layoutBody(doc)).size === 0) {
    throw usageError(`${file} names no rack, row or room: without --prune that changes nothing; to empty the topology, give --prune`)
  }
  const previous = opts.previous ? layoutBody(readLayoutFile(opts.previous, {skipKeys: APPLY_KEYS})) : undefined
  const backend = await backendOf()
  let planned: TopologyPlan | undefined
  /** The error the apply ends with, in words that say what to do about it. */
  const explained = (err: unknown) => {
    if (isGroupViolation(err)) return withContext(err as ApiError, '', ALLOW_HINT)
    if (err instanceof ApiError && err.status === 409 && planned) {
      // Running again only helps when the generation was the plan's own, not one the file or flag pins.
      const pinned =
        opts.generation !== undefined
          ? '--generation'
          : doc.generation !== undefined
            ? `the file's "generation: ${doc.generation}"`
            : undefined
      const advice = pinned
        ? `; nothing was applied. ${pinned} is stale: read the layout again (placemat topology layout), or drop the generation to apply over the change`
        : '; nothing was applied (run again)'
      return withContext(
        err,
        pinned ? 'the topology changed since the file was read: ' : 'the topology changed since the plan was made: ',
        advice,
      )
    }
    return err
  }
  const start = performance.now()
  let res: LayoutApplyResult
  try {
    res = await backend.applyLayout(layoutBody(doc), {
      dryRun: opts.dryRun,
      generation: opts.generation ?? doc.generation,
      allowViolations: opts.allowViolations,
      prune: opts.prune,
      previous,
      concurrency: opts.concurrency,
      onPlan: (plan) => {
        planned = plan
        opts.onPlan?.(plan, doc)
      },
      onProgress: opts.onProgress,
    })
  } catch (err) {
    throw explained(err)
  }
  const seconds = (performance.now() - start) / 1000
  return {res, seconds, refusal: res.refusal && (explained(res.refusal) as ApiError)}
}
