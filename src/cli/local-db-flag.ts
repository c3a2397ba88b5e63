/**
 * The --db flag of the commands that work on the local daemon's database unless told
 * otherwise (daemon start, stop and status, db status and check). Its default is the
 * environment's ($PLACEMAT_DB, else placemat.db in the data directory: $PLACEMAT_HOME, else
 * $XDG_DATA_HOME/placemat, else ~/.local/share/placemat), worked out when the command runs or
 * its help is shown, never when the CLI is built (the manifest would keep the build's); the help
 * shows a URL's password as ***.
 */
import {Flags} from '@oclif/core'
import {defaultDbFile} from '../daemon/paths.js'
import {databaseOfFlags} from '../daemon/database-source.js'
import {ConfigFileError, readConfigFile, type ConfigFileSettings} from '../daemon/config-file.js'
import {describeTarget} from '../store/target.js'
import {failure} from './failure.js'

export const localDbFlag = (description: string) =>
  Flags.string({
    description,
    default: async () => defaultDbFile(),
    defaultHelp: async () => describeTarget(defaultDbFile()),
    noCacheDefault: true,
  })

/** What else names a daemon's database, for `daemon status` and `daemon stop` to find the daemon `daemon start` started. */
export const daemonDbFlags = {
  'db-url-file': Flags.string({description: 'a file holding the database URL, as daemon start takes it (env PLACEMAT_DB_FILE)'}),
  'config-file': Flags.string({
    description: 'placement.conf, whose [placement_database] connection names the database (as daemon start takes it)',
  }),
}

/**
 * The database `daemon status`, `daemon stop` or `upgrade check` means: as `daemon start`
 * chooses it (--db given, PLACEMAT_DB, a URL file, placement.conf's connection, the data
 * directory's); and placement.conf's other settings, when one is named.
 */
export function daemonSources(
  flags: {db: string; 'db-url-file'?: string; 'config-file'?: string},
  dbGiven: boolean,
): {target: string; config?: ConfigFileSettings} {
  let config: ConfigFileSettings | undefined
  if (flags['config-file']) {
    try {
      config = readConfigFile(flags['config-file'])
    } catch (err) {
      if (err instanceof ConfigFileError) throw failure(err.message)
      throw err
    }
  }
  const target = databaseOfFlags(
    flags,
    dbGiven,
    flags['config-file'] ? {file: flags['config-file'], connection: config?.databaseConnection} : undefined,
  ).target
  return {target, config}
}

export const daemonDatabase = (flags: {db: string; 'db-url-file'?: string; 'config-file'?: string}, dbGiven: boolean): string =>
  daemonSources(flags, dbGiven).target
