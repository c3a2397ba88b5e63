/**
 * Lone strategy: one single-path group, whose matching providers (prepareGroup's `lone`, found
 * only as far as needed) are the candidates as they are, with no merging.
 */
import type {Search} from './search.js'

export function enumerateLone(s: Search): void {
  s.sink.takeAll(s.plan.preps[0].lone!)
}
