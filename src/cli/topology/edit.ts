/**
 * What the rack/row/room commands' edits of the topology share (the backend edits: placemat
 * keeps the layout and guards it with its generation; on plain Placement the operator's layout
 * file is the record): how plain Placement without that file is refused, and hosts named as the
 * layout names them.
 */
import type {PlacementClient} from '../../client/client.js'
import {badRequestError} from '../failure.js'
import {resolveProvider} from '../backend/provider-lookup.js'
import {mapLimit} from '../../client/map-limit.js'

export const NEEDS_LAYOUT =
  'this is a plain OpenStack Placement endpoint (no /placemat/v1): it stores the aggregates but not the names of racks, rows and rooms; pass the layout file with --layout FILE'

/** Host references (uuids or names) as the names the layout keeps; unknown ones exit 3. */
export async function hostNames(client: PlacementClient, refs: string[]): Promise<string[]> {
  const found = await mapLimit([...new Set(refs)], 8, (ref) => resolveProvider(client, ref))
  const notRoot = found.filter((p) => p.parent_provider_uuid)
  if (notRoot.length) throw badRequestError(`not a root provider (only whole hosts go in racks): ${notRoot.map((p) => p.name).join(', ')}`)
  return found.map((p) => p.name)
}
