/**
 * The daemon's flavor catalog (`daemon start --flavors FILE`): Nova's requests for each flavor,
 * read at start and again on SIGHUP. A file that cannot be read or parsed is refused naming it,
 * and the catalog in force stays.
 */
import fs from 'node:fs'
import {parseFlavors} from '../core/headroom/flavor-file.js'
import {flavorRequest, type FlavorRequest} from '../core/headroom/flavors.js'

export class FlavorCatalog {
  private held: FlavorRequest[] = []

  constructor(readonly file: string) {}

  /** Reads the file (throws on a fault, keeping what was in force); answers how many flavors it holds. */
  load(): number {
    let text: string
    try {
      text = fs.readFileSync(this.file, 'utf8')
    } catch (err) {
      throw new Error(`cannot read the flavor file ${this.file}: ${(err as Error).message}`)
    }
    this.held = parseFlavors(text, this.file).map(flavorRequest)
    return this.held.length
  }

  get flavors(): readonly FlavorRequest[] {
    return this.held
  }
}
