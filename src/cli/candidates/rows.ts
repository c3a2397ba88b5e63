/** Candidates as table rows: providers by name, amounts, what is left, the rack. */
import type {ListedProvider} from '../../core/wire.js'
import {placementInLayout, emptyNodes, type Level} from './anchors.js'
import type {CandidateSearch} from './search.js'

export interface CandidateRow {
  index: number
  providers: string
  resources: string
  free_after: string
  rack: string
  row: string
  room: string
  uuids: string[]
}

const nameOf = (providers: Map<string, ListedProvider> | undefined, uuid: string) => providers?.get(uuid)?.name ?? uuid

/** One row per candidate: provider names, amounts, and what is left of those classes after this claim. */
export function candidateRows(search: CandidateSearch): CandidateRow[] {
  const {body, providers, topology} = search
  return body.allocation_requests.map((ar, i) => {
    const uuids = Object.keys(ar.allocations)
    const parts: string[] = []
    const free: string[] = []
    for (const rp of uuids) {
      const res = ar.allocations[rp].resources
      const name = nameOf(providers, rp)
      parts.push(
        `${name}: ${Object.entries(res)
          .map(([rc, n]) => `${rc}=${n}`)
          .join(',')}`,
      )
      const sum = body.provider_summaries?.[rp]?.resources ?? {}
      free.push(
        `${name}: ${Object.entries(res)
          .map(([rc, n]) => `${rc}=${sum[rc] ? sum[rc].capacity - sum[rc].used - n : '?'}`)
          .join(',')}`,
      )
    }
    const where = topology ? placementInLayout(topology, providers ?? new Map(), uuids) : emptyNodes()
    const names = (l: Level) =>
      [...where[l]]
        .map((u) => topology!.nodes.get(u)?.name ?? u)
        .sort()
        .join(',')
    return {
      index: i + 1,
      providers: uuids.map((u) => nameOf(providers, u)).join(','),
      resources: parts.join('; '),
      free_after: free.join('; '),
      rack: names('rack'),
      row: names('row'),
      room: names('room'),
      uuids,
    }
  })
}
