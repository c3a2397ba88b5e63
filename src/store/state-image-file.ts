/**
 * The file a daemon leaves beside its SQLite database at a clean stop: the State's image
 * (core/state/image.ts) under a header naming the release and schema that wrote it and a token.
 * The same token is recorded in the database (placemat_meta 'state_image') once the file is in
 * place, so an image is only ever read back onto the history it was taken from: a database
 * restored from a copy made before that stop does not hold the token, and is loaded from its rows.
 */
import fs from 'node:fs'
import {STATE_IMAGE_FORMAT, type StateImage} from '../core/state/image.js'
import {RELEASE} from './release.js'
import {LATEST_MIGRATION} from './schema.js'

/** placemat_meta's key of the token of the last image written for this database. */
export const STATE_IMAGE_KEY = 'state_image'

export interface StateImageFile {
  release: string
  schema: string
  token: string
  image: StateImage
}

/** The text of the image at `path`, read in the thread pool (null: none, or unreadable). */
export function readStateImageText(path: string): Promise<string | null> {
  return fs.promises.readFile(path, 'utf8').catch(() => null)
}

/**
 * The image in `text` when this release can read it (same release, schema and format); null
 * when there is none or it cannot be used, which only costs a load from the database.
 */
export function parseStateImage(text: string | null): StateImageFile | null {
  if (text === null) return null
  try {
    const file = JSON.parse(text) as StateImageFile
    if (file?.release !== RELEASE || file.schema !== LATEST_MIGRATION || typeof file.token !== 'string') return null
    if (file.image?.format !== STATE_IMAGE_FORMAT) return null
    return file
  } catch {
    return null
  }
}

/**
 * Writes `image` to `path` whole or not at all: a temporary file, synced, renamed into place.
 * Throws when it cannot (the caller then leaves the database's token as it was).
 */
export function writeStateImage(path: string, token: string, image: StateImage): void {
  const file: StateImageFile = {release: RELEASE, schema: LATEST_MIGRATION, token, image}
  const tmp = `${path}.${process.pid}.tmp`
  try {
    const fd = fs.openSync(tmp, 'w', 0o600)
    try {
      fs.writeSync(fd, JSON.stringify(file))
      fs.fsyncSync(fd)
    } finally {
      fs.closeSync(fd)
    }
    fs.renameSync(tmp, path)
  } catch (err) {
    fs.rmSync(tmp, {force: true})
    throw err
  }
}
