/**
 * Which providers changed shape (tree, inventories, traits, aggregates, existence), by the
 * State's shapeVersion: what lets a provider index follow a write by touching only the
 * providers it changed instead of re-reading the whole cloud.
 *
 * The log is bounded: old entries are dropped, and a change that cannot be told provider by
 * provider (a reload, a class rename) clears it. Asking for changes older than what it still
 * holds answers null: start again from the whole State.
 */
const MAX_ENTRIES = 200_000

export interface ShapeChanges {
  /** Every provider whose shape may differ. */
  touched: Set<string>
  /** Providers added, in the order they were added (the State's order); each one once, at its last addition. */
  added: string[]
}

export class ShapeLog {
  private versions: number[] = []
  private uuids: string[] = []
  private adds: boolean[] = []
  /** Changes at or before this version are not in the log. */
  private floor = 0

  /** Provider `uuid` changed shape at `version` (`added`: it was added then). */
  note(version: number, uuid: string, added = false): void {
    this.versions.push(version)
    this.uuids.push(uuid)
    this.adds.push(added)
    if (this.versions.length > MAX_ENTRIES) this.drop(this.versions.length >> 1)
  }

  /** A change at `version` that touched everything (or cannot say what it touched). */
  noteAll(version: number): void {
    this.versions = []
    this.uuids = []
    this.adds = []
    this.floor = version
  }

  /** What changed after `version`, or null when the log no longer reaches back that far. */
  since(version: number): ShapeChanges | null {
    if (version < this.floor) return null
    let k = this.versions.length
    while (k > 0 && this.versions[k - 1] > version) k--
    const touched = new Set<string>()
    const lastAdd = new Map<string, number>()
    for (let j = k; j < this.versions.length; j++) {
      touched.add(this.uuids[j])
      if (this.adds[j]) lastAdd.set(this.uuids[j], j)
    }
    const added = [...lastAdd].sort((a, b) => a[1] - b[1]).map(([u]) => u)
    return {touched, added}
  }

  private drop(count: number): void {
    this.floor = this.versions[count - 1]
    this.versions = this.versions.slice(count)
    this.uuids = this.uuids.slice(count)
    this.adds = this.adds.slice(count)
  }
}
