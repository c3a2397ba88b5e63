/**
 * `placemat export`: the cloud a backend holds, written out as a snapshot (`placemat import`
 * loads it; read as state-export.ts reads it), as an apply file (applying it plans nothing), or
 * straight into an empty OpenStack Placement database, the way back. The modules only some of
 * these need are loaded when they are.
 */
import type {PlacementWriteResult} from '../../store/placement-db/writer.js'
import {loadState, type Backend} from '../backend/backend.js'
import {conflictError, usageError} from '../failure.js'
import {snapshotText} from '../formats/snapshot-write.js'
import {disabledHosts, exportSnapshot, placematOnly, readPlacematParts, type ExportProgress} from './state-export.js'

/** What plain OpenStack Placement leaves out of a snapshot, said once. */
export const KEEPS_NOTHING =
  'this endpoint is plain OpenStack Placement, which keeps no racks, rows, rooms, placement groups, aggregate names or reasons hosts are disabled: the snapshot has none ' +
  "(the hosts' aggregates are in it; names and groups kept in --layout or --groups files are not)"

/** A snapshot's text, with how many providers and consumers it holds. */
export interface ExportedSnapshot {
  text: string
  providers: number
  consumers: number
}

/** The whole cloud as a snapshot's text (YAML, or JSON), read as state-export.ts reads it. */
export async function exportSnapshotText(
  backend: Backend,
  opts: {json: boolean; progress?: ExportProgress; warn: (message: string) => void},
): Promise<ExportedSnapshot> {
  const snap = await exportSnapshot(backend, {progress: opts.progress, keepsNothing: () => opts.warn(KEEPS_NOTHING)})
  return {text: snapshotText(snap, opts.json ? 'json' : 'yaml'), providers: snap.providers.length, consumers: snap.consumers?.length ?? 0}
}

/** The cloud as an apply file, made by the core from a State of it. */
export async function exportApplyFile(backend: Backend, json: boolean): Promise<string> {
  const [{applyDocumentOf}, {default: YAML}] = await Promise.all([import('../../core/apply-plan/document.js'), import('yaml')])
  const doc = applyDocumentOf(await loadState(backend))
  if (json) return JSON.stringify(doc, null, 2) + '\n'
  return `# placemat apply file: the cloud as it is (placemat export --format apply)\n${YAML.stringify(doc, {flowCollectionPadding: false})}`
}

/**
 * The way back: the cloud (a --db file's own State, or a daemon's, read whole) written into the
 * empty Placement database at `url`; what Placement has no place for is warned of once written.
 * What was written, and the database as it may be shown (no password).
 */
export async function exportToPlacement(
  backend: Backend,
  url: string,
  warn: (message: string) => void,
): Promise<{written: PlacementWriteResult; shown: string}> {
  const [{writePlacement, PlacementNotEmptyError}, {PlacementSchemaError}, {PlacementUrlError, maskPassword}] = await Promise.all([
    import('../../store/placement-db/writer.js'),
    import('../../store/placement-db/reader.js'),
    import('../../store/placement-db/connection.js'),
  ])
  const state = await loadState(backend)
  const own = await readPlacematParts(backend)
  const leftOut = own && placematOnly(own.parts, (await backend.disabledReasons(disabledHosts(state.providers.values()))).size)
  try {
    const written = await writePlacement(url, state)
    if (leftOut) warn(`not written into Placement, which has no place for them: ${leftOut}`)
    return {written, shown: maskPassword(url)}
  } catch (err) {
    if (err instanceof PlacementNotEmptyError) throw conflictError(`${maskPassword(url)}: ${err.message}`)
    if (err instanceof PlacementSchemaError || err instanceof PlacementUrlError) throw usageError(`${maskPassword(url)}: ${err.message}`)
    throw err
  }
}
