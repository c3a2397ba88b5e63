/**
 * The --db flag of the commands that work on the local daemon's database unless told
 * otherwise (daemon start, stop and status, db status and check). Its default is the
 * environment's ($PLACEMAT_DB, else placemat.db in the data directory: $PLACEMAT_HOME, else
 * $XDG_DATA_HOME/placemat, else ~/.local/share/placemat), worked out when the command runs or
 * its help is shown, never when the CLI is built (the manifest would keep the build's).
 */
import {Flags} from '@oclif/core'
import {defaultDbFile} from '../daemon/paths.js'

export const localDbFlag = (description: string) =>
  Flags.string({
    description,
    default: async () => defaultDbFile(),
    defaultHelp: async () => defaultDbFile(),
    noCacheDefault: true,
  })
