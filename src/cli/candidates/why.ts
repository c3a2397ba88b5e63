/**
 * Why a search found no candidate, in one line. The core decides it (core/candidates/why.ts),
 * where the backend keeps what it needs: placemat answers it for the query the search sent (a
 * daemon, or --db in process); plain Placement works it out on a snapshot of the cloud (with
 * the --groups file's groups and the --layout file's racks, rows and rooms when given).
 */
import type {Endpoint} from '../backend/backend.js'
import type {CandidateSearch} from './search.js'

/**
 * Why `search` came back empty, or undefined when that cannot be said (the request's own
 * candidates exist and only the command line's checks of --same/--different left them out, or
 * the explanation could not be read: it never hides the answer it explains).
 */
export async function whyEmpty(endpoint: Endpoint, search: CandidateSearch): Promise<string | undefined> {
  try {
    const found = await (await endpoint.backend()).why(search.ask)
    if (found) return found.why
    if (search.rules.length) return 'the candidates found all break the --same/--different rules'
  } catch {
    // Best effort: the search's own answer stands without it.
  }
  return undefined
}
