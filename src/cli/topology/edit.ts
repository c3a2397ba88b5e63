/**
 * Read-modify-write edits of the topology (the rack/row/room commands): placemat keeps the
 * layout and guards it with its generation; on plain Placement the operator's layout file
 * is the record, read, edited, applied and written back.
 */
import fs from 'node:fs'
import type {PlacementClient} from '../../client/client.js'
import type {Layout} from '../../core/topology.js'
import type {Backend, LayoutApplyResult, Progress} from '../backend/backend.js'
import {badRequestError, usageError} from '../failure.js'
import {resolveProvider} from '../services/providers.js'
import {mapLimit} from '../../client/map-limit.js'
import {isConcurrentUpdate, retryOnConcurrentUpdate} from '../services/retry.js'
import {layoutBody, layoutYaml, readLayoutFile, type LayoutDoc} from './layout-file.js'

export const NEEDS_LAYOUT =
  'this is a plain OpenStack Placement endpoint (no /placemat/v1): it stores the aggregates but not the names of racks, rows and rooms; pass the layout file with --layout FILE'

export interface EditOptions {
  dryRun?: boolean
  /** Plain Placement: the layout file that records the topology (read, edited, written back). */
  layoutFile?: string
  concurrency?: number
  allowViolations?: boolean
  onProgress?: Progress
}

export interface EditResult extends LayoutApplyResult {
  layout: Layout
}

/**
 * placemat: GET the layout, edit it, PUT it with the generation it was read at; on 409
 * (another edit in between) read and edit again, a few times. Plain Placement: the layout
 * file is read, edited, applied (the old file as `previous`) and written back. The edited
 * layout is the whole topology: what the edit took out is deleted (prune).
 */
export async function editLayout(backend: Backend, edit: (doc: Layout) => void, opts: EditOptions = {}): Promise<EditResult> {
  if (backend.placemat) {
    return retryOnConcurrentUpdate(async () => {
      const {generation, ...doc} = (await backend.currentLayout())!
      edit(doc)
      const res = await backend.applyLayout(layoutBody(doc), {
        dryRun: opts.dryRun,
        generation,
        allowViolations: opts.allowViolations,
        prune: true,
        onProgress: opts.onProgress,
      })
      // A dry run that met another edit in between reads and edits again, as the write would.
      if (res.refusal && isConcurrentUpdate(res.refusal)) throw res.refusal
      return {...res, layout: doc}
    }, 6)
  }
  if (!opts.layoutFile) throw usageError(NEEDS_LAYOUT)
  const before: LayoutDoc = fs.existsSync(opts.layoutFile) ? readLayoutFile(opts.layoutFile) : {}
  const doc = structuredClone(layoutBody(before))
  edit(doc)
  const res = await backend.applyLayout(doc, {
    dryRun: opts.dryRun,
    previous: before,
    prune: true,
    concurrency: opts.concurrency,
    onProgress: opts.onProgress,
  })
  if (!opts.dryRun)
    fs.writeFileSync(opts.layoutFile, layoutYaml(doc, ['placemat topology layout (plain Placement: this file is the record of the names)']))
  return {...res, layout: doc}
}

/** Host references (uuids or names) as the names the layout keeps; unknown ones exit 3. */
export async function hostNames(client: PlacementClient, refs: string[]): Promise<string[]> {
  const found = await mapLimit([...new Set(refs)], 8, (ref) => resolveProvider(client, ref))
  const notRoot = found.filter((p) => p.parent_provider_uuid)
  if (notRoot.length) throw badRequestError(`not a root provider (only whole hosts go in racks): ${notRoot.map((p) => p.name).join(', ')}`)
  return found.map((p) => p.name)
}
