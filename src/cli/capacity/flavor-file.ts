/** A flavor file read for the command line: its faults are the operator's to correct (exit 2). */
import fs from 'node:fs'
import {FlavorFileError, parseFlavors} from '../../core/headroom/flavor-file.js'
import type {Flavor} from '../../core/headroom/flavors.js'
import {usageError} from '../failure.js'

/** The flavors in `file` ('-': stdin). */
export function readFlavorFile(file: string): Flavor[] {
  let text: string
  try {
    text = fs.readFileSync(file === '-' ? 0 : file, 'utf8')
  } catch (err) {
    throw usageError(`cannot read the flavor file ${file}: ${(err as Error).message}`)
  }
  try {
    return parseFlavors(text, file)
  } catch (err) {
    if (err instanceof FlavorFileError) throw usageError(err.message)
    throw err
  }
}
