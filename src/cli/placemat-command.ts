import fs from 'node:fs'
import {type Command, Flags, type Interfaces} from '@oclif/core'
import {ApiError, CertificateError, PlacementClient, UnreachableError} from '../client/client.js'
import {HttpTransport} from '../client/transports.js'
import {LocalTransport} from './backend/local-transport.js'
import {readRecord} from '../daemon/control.js'
import {daemonFiles, defaultDbFile, readAdminToken} from '../daemon/paths.js'
import {
  csvLines,
  csvRecord,
  outputMisfit,
  pickColumns,
  pickedRows,
  recordValue,
  serialize,
  table,
  valueLines,
  type Column,
  type Format,
  type OutputChoices,
  type Printed,
} from './output.js'
import {foreignDatabaseUrl, isDatabaseUrl} from '../store/target.js'
import type {Backend, Endpoint} from './backend/backend.js'
import {BaseCommand} from './base-command.js'
import {notFoundError, usageError, withContext} from './failure.js'

export {ExitCode} from './failure.js'

const noDatabase = (db: string) => `no database file at ${db} (create one with: placemat db init --db ${db})`

export type BaseFlags<T extends typeof Command> = Interfaces.InferredFlags<(typeof PlacematCommand)['baseFlags'] & T['flags']>

/**
 * The base of every command that talks to placement: resolves the transport
 * (--url, --db, env, or the local daemon), renders output, and turns failures
 * into one line on stderr with a stable exit code.
 */
export abstract class PlacematCommand extends BaseCommand {
  static baseFlags = {
    url: Flags.string({
      description: 'Placement endpoint: a placemat daemon or any OpenStack Placement (env PLACEMAT_URL)',
      helpGroup: 'CONNECTION',
      exclusive: ['db'],
    }),
    db: Flags.string({
      description: 'work on this SQLite file (or postgres:// or mysql:// URL) directly, no daemon needed (env PLACEMAT_DB)',
      helpGroup: 'CONNECTION',
    }),
    token: Flags.string({
      description: "auth token (env PLACEMAT_TOKEN or OS_TOKEN; the local daemon's own is found by itself)",
      helpGroup: 'CONNECTION',
    }),
    'os-cloud': Flags.string({
      description: 'a cloud of clouds.yaml (and secure.yaml): log in to its Keystone (env OS_CLOUD)',
      helpGroup: 'OPENSTACK',
    }),
    'os-region-name': Flags.string({
      description: "the catalog's region for the placement endpoint (env OS_REGION_NAME)",
      helpGroup: 'OPENSTACK',
    }),
    'os-interface': Flags.string({
      description: "the catalog's interface for the placement endpoint (env OS_INTERFACE; default public)",
      options: ['public', 'internal', 'admin'],
      helpGroup: 'OPENSTACK',
    }),
    'os-placement-api-version': Flags.string({
      description: 'the microversion to ask for, as osc-placement takes it (env OS_PLACEMENT_API_VERSION; default latest)',
      helpGroup: 'OPENSTACK',
    }),
    'os-cacert': Flags.string({
      description: "a PEM file of the authority that signed the endpoints' TLS certificates, Keystone's and Placement's (env OS_CACERT)",
      helpGroup: 'OPENSTACK',
    }),
    json: Flags.boolean({description: 'print JSON', helpGroup: 'OUTPUT', exclusive: ['yaml', 'format']}),
    yaml: Flags.boolean({description: 'print YAML', helpGroup: 'OUTPUT', exclusive: ['format']}),
    format: Flags.string({
      char: 'f',
      description: 'output format: table, value (cells separated by spaces, none holding any, no header: for scripts), csv, json or yaml',
      options: ['table', 'value', 'csv', 'json', 'yaml'],
      helpGroup: 'OUTPUT',
    }),
    columns: Flags.string({
      char: 'c',
      description: 'columns (or keys) to show, in this order: comma separated, or repeated as osc takes them (-c uuid -c name)',
      helpGroup: 'OUTPUT',
      multiple: true,
    }),
    'no-headers': Flags.boolean({description: 'tables without their header line', helpGroup: 'OUTPUT'}),
    'max-width': Flags.integer({
      description: "tables at most this many columns wide, the widest cells wrapped (osc's; CLIFF_MAX_TERM_WIDTH too)",
      helpGroup: 'OUTPUT',
    }),
    'fit-width': Flags.boolean({description: "tables fitted to the terminal's width (osc's; CLIFF_FIT_WIDTH=1 too)", helpGroup: 'OUTPUT'}),
    ids: Flags.boolean({description: 'lists: only the uuids, one a line (for scripts)', helpGroup: 'OUTPUT'}),
    'sort-column': Flags.string({description: 'sort table rows by this column (repeatable)', helpGroup: 'OUTPUT', multiple: true}),
  }

  /**
   * What the command prints as text, declared by commands that write (from their flags when it
   * depends on them): -c, --sort-column and --ids are checked against it before anything is
   * written, not refused after the write. Undeclared (commands that only read): checked as printed.
   */
  static printed?: Printed | ((flags: Record<string, any>) => Printed)

  protected base!: {
    url?: string
    db?: string
    token?: string
    'os-cloud'?: string
    'os-region-name'?: string
    'os-interface'?: string
    'os-placement-api-version'?: string
    'os-cacert'?: string
    json: boolean
    yaml: boolean
    format?: Format
    columns?: string[]
    'no-headers'?: boolean
    'max-width'?: number
    'fit-width'?: boolean
    'sort-column'?: string[]
    ids?: boolean
  }
  /** What this invocation prints, when its command declares it (`printed`). */
  private declared?: Printed
  private clientPromise?: Promise<PlacementClient>
  private backendPromise?: Promise<Backend>
  /** What this invocation talks to, from its flags and environment: an endpoint, a database, or neither (the local daemon). */
  private target!: {url?: string; db?: string}
  /** How the client reached its endpoint, and where its token came from (for the hint on a failure). */
  private reached: {via: 'db' | 'keystone'} | {via: 'url' | 'local'; token: string | null; tokenFile?: string} = {via: 'db'}

  async init(): Promise<void> {
    await super.init()
    const {flags} = await this.parse(this.ctor as any)
    this.base = flags as any
    const printed = (this.ctor as typeof PlacematCommand).printed
    this.declared = typeof printed === 'function' ? printed(flags) : printed
    if (this.declared && (this.textOutput || this.declared.document)) this.checkOutputFlags(this.declared)
    const url = this.base.url ?? (this.base.db ? undefined : process.env.PLACEMAT_URL)
    const db = this.base.db ?? (url ? undefined : process.env.PLACEMAT_DB)
    this.target = {url, db}
    // A missing file is said at once, before any input is read (a big apply file takes a while).
    const foreign = db ? foreignDatabaseUrl(db) : null
    if (foreign) throw foreign
    if (db && !isDatabaseUrl(db) && !fs.existsSync(db)) throw notFoundError(noDatabase(db))
    if (!db) await this.trustCloudCa()
  }

  /**
   * --os-cacert, OS_CACERT (or the cloud's cacert): Node takes extra certificate authorities only
   * at start (NODE_EXTRA_CA_CERTS), so the command runs again with it, before it has read anything.
   */
  private async trustCloudCa(): Promise<void> {
    let ca = this.base['os-cacert'] ?? process.env.OS_CACERT
    const name = this.base['os-cloud'] ?? process.env.OS_CLOUD
    if (!ca && name) {
      const {namedCloud} = await import('../client/openstack/clouds.js')
      try {
        ca = namedCloud(name, process.env).cacert
      } catch {
        return // said when the client is opened
      }
    }
    if (!ca || process.env.NODE_EXTRA_CA_CERTS === ca) return
    if (!fs.existsSync(ca)) throw usageError(`the CA certificate file ${ca} (--os-cacert, OS_CACERT or cacert) does not exist`)
    const {spawnSync} = await import('node:child_process')
    const again = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
      stdio: 'inherit',
      env: {...process.env, NODE_EXTRA_CA_CERTS: ca},
    })
    this.exit(again.status ?? 1)
  }

  /** table, value, json or yaml; `value` prints like a table without header or padding. */
  get format(): Format {
    return this.base.json ? 'json' : this.base.yaml ? 'yaml' : (this.base.format ?? 'table')
  }

  /** True when the output is lines for people or scripts (table, value or csv), not a document. */
  get textOutput(): boolean {
    return this.format === 'table' || this.format === 'value' || this.format === 'csv'
  }

  /** The client for this invocation, opened on first use. */
  client(): Promise<PlacementClient> {
    this.clientPromise ??= this.openClient()
    return this.clientPromise
  }

  /**
   * What this invocation talks to, chosen once: a placemat daemon or --db file, or a plain
   * OpenStack Placement (asked once, on commands that need to know).
   */
  backend(): Promise<Backend> {
    this.backendPromise ??= (async () => {
      const client = await this.client()
      const {chooseBackend} = await import('./backend/choose.js')
      return chooseBackend(client, {local: this.target.db !== undefined})
    })()
    return this.backendPromise
  }

  /** The client, with the backend left to be chosen if and when something needs it. */
  async endpoint(): Promise<Endpoint> {
    return {client: await this.client(), backend: () => this.backend()}
  }

  private async openClient(): Promise<PlacementClient> {
    const {url, db} = this.target
    if (db) return new PlacementClient(await LocalTransport.open(db))
    const keystone = await this.openstackClient(url)
    if (keystone) {
      this.reached = {via: 'keystone'}
      return keystone
    }
    const given = this.base.token ? '--token' : process.env.PLACEMAT_TOKEN ? 'PLACEMAT_TOKEN' : process.env.OS_TOKEN ? 'OS_TOKEN' : null
    const token = this.base.token ?? process.env.PLACEMAT_TOKEN ?? process.env.OS_TOKEN
    const version = this.base['os-placement-api-version'] ?? process.env.OS_PLACEMENT_API_VERSION ?? 'latest'
    if (url) {
      this.reached = {via: 'url', token: given}
      return new PlacementClient(new HttpTransport(url, token), version)
    }
    // The local daemon: its pid record says where it listens; its admin token sits beside its
    // database. No record, no daemon of this data directory: another one listening on the usual
    // port serves another database, and is never talked to in its place.
    const dbFile = defaultDbFile()
    const record = readRecord(dbFile)
    if (!record) {
      throw new UnreachableError(
        `no daemon serves ${dbFile} (no pid record in ${daemonFiles(dbFile).dir}); ` +
          'start one with `placemat daemon start`, give its address with --url, or work on a file with --db FILE',
      )
    }
    const tokenFile = daemonFiles(dbFile).token
    this.reached = {via: 'local', token: given ?? (readAdminToken(dbFile) ? 'the admin token file' : null), tokenFile}
    return new PlacementClient(new HttpTransport(record.url, token ?? readAdminToken(dbFile)), version)
  }

  /**
   * A client that logs in to Keystone, as every OpenStack tool does: the cloud named by
   * --os-cloud or OS_CLOUD (clouds.yaml), else the OS_* variables when they say how to
   * authenticate (and no --token is given). Undefined when neither applies.
   */
  private async openstackClient(url: string | undefined): Promise<PlacementClient | undefined> {
    const name = this.base['os-cloud'] ?? process.env.OS_CLOUD
    if (!name && (this.base.token || process.env.PLACEMAT_TOKEN)) return undefined
    const [{namedCloud, envCloud, CloudConfigError}, {KeystoneSession}, {KeystoneTransport}] = await Promise.all([
      import('../client/openstack/clouds.js'),
      import('../client/openstack/session.js'),
      import('../client/openstack/transport.js'),
    ])
    let auth
    try {
      auth = name ? namedCloud(name, process.env) : envCloud(process.env)
    } catch (err) {
      if (err instanceof CloudConfigError) throw usageError(err.message)
      throw err
    }
    if (!auth) return undefined
    if (this.base['os-region-name']) auth.region = this.base['os-region-name']
    if (this.base['os-interface']) auth.interface = this.base['os-interface'] as typeof auth.interface
    // OS_INSECURE / verify: false: TLS certificates are not checked (Node reads this per connection).
    if (auth.insecure) process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0'
    const version = this.base['os-placement-api-version'] ?? process.env.OS_PLACEMENT_API_VERSION ?? auth.placementApiVersion ?? 'latest'
    return new PlacementClient(new KeystoneTransport(new KeystoneSession(auth), url), version)
  }

  /** -c, --sort-column and --ids as given. */
  private get outputChoices(): OutputChoices {
    return {
      columns: this.pickedColumns,
      sortBy: this.base['sort-column'],
      ids: this.base.ids,
      noHeaders: this.base['no-headers'],
    }
  }

  /**
   * The most columns a table may take, as osc takes it: --max-width N (below 1: none), else
   * CLIFF_MAX_TERM_WIDTH; --fit-width (or CLIFF_FIT_WIDTH=1) the terminal's width.
   */
  private get tableWidth(): number | undefined {
    const given = this.base['max-width'] ?? (process.env.CLIFF_MAX_TERM_WIDTH ? Number(process.env.CLIFF_MAX_TERM_WIDTH) : undefined)
    if (given !== undefined && Number.isFinite(given)) return given > 0 ? given : undefined
    if (this.base['fit-width'] || process.env.CLIFF_FIT_WIDTH === '1') return process.stdout.columns || undefined
    return undefined
  }

  /** Whether output() prints the rows: as text, or their -c columns as JSON/YAML (else the document alone). */
  protected get printsRows(): boolean {
    return this.textOutput || !!this.pickedColumns?.length
  }

  /** The columns -c asks for (each -c comma separated), in order; undefined without -c. */
  protected get pickedColumns(): string[] | undefined {
    return this.base.columns
      ?.flatMap((c) => c.split(','))
      .map((c) => c.trim())
      .filter(Boolean)
  }

  /** A usage error when the output flags ask for what `printed` does not have. */
  private checkOutputFlags(printed: Printed): void {
    const misfit = outputMisfit(printed, this.outputChoices, this.commandLine)
    if (misfit) throw usageError(misfit)
  }

  /** The command as typed, for messages: "placemat host show". */
  private get commandLine(): string {
    return `${this.config.bin} ${(this.id ?? '').replace(/:/g, ' ')}`
  }

  /** Prints data as JSON/YAML when asked, else as a table of `columns` (or via `human`). */
  output<T>(data: unknown, rows: T[], columns: Column<T>[]): void {
    const only = this.base.ids ? ['uuid'] : this.outputChoices.columns
    if (!this.textOutput) {
      // -c with JSON or YAML: the rows' columns asked for, as osc prints them.
      if (only?.length && !this.base.ids) {
        this.checkOutputFlags({columns})
        this.log(serialize(pickedRows(rows, columns, only, this.base['sort-column']), this.format))
      } else this.log(serialize(data, this.format))
      return
    }
    this.checkOutputFlags({columns})
    // --ids: the uuid column alone, bare: what `for x in $(...)` wants.
    const opts = {only, sortBy: this.base['sort-column'], headers: !this.base['no-headers'] && !this.base.ids, maxWidth: this.tableWidth}
    const text =
      this.format === 'value' || this.base.ids
        ? valueLines(rows, columns, opts)
        : this.format === 'csv'
          ? csvLines(rows, columns, opts)
          : table(rows, columns, opts)
    if (text) this.log(text)
  }

  /**
   * Prints a record (JSON/YAML) or key: value lines; -c picks and orders the keys shown. Text
   * lines given with their JSON `document` take its keys in -c too (its value where the text has
   * none of that key), as do the keys the command declared it prints (empty when absent).
   */
  outputRecord(data: Record<string, unknown>, document: Record<string, unknown> = {}): void {
    if (!this.textOutput) {
      // -c with JSON or YAML: only the keys asked for, as osc prints them.
      const only = this.outputChoices.columns
      if (only?.length) {
        let keys: string[]
        try {
          keys = pickColumns(
            Object.keys(data).map((key) => ({key})),
            only,
          )
        } catch (err) {
          throw usageError((err as Error).message)
        }
        data = Object.fromEntries(keys.map((k) => [k, data[k]]))
      }
      this.log(serialize(data, this.format))
      return
    }
    // Key lines: no list for --ids, no table to sort (-c is checked against the keys below).
    const {ids, sortBy} = this.outputChoices
    const misfit = outputMisfit({keys: Object.keys(data)}, {ids, sortBy}, this.commandLine)
    if (misfit) throw usageError(misfit)
    const only = this.outputChoices.columns
    if (only?.length) {
      const names = [...new Set([...Object.keys(data), ...Object.keys(document), ...(this.declared?.keys ?? [])])]
      let keys: string[]
      try {
        keys = pickColumns(
          names.map((key) => ({key})),
          only,
        )
      } catch (err) {
        throw usageError((err as Error).message)
      }
      data = Object.fromEntries(keys.map((k) => [k, k in data ? data[k] : document[k]]))
    }
    if (this.format === 'csv') {
      this.log(csvRecord(data))
      return
    }
    const width = Math.max(...Object.keys(data).map((k) => k.length))
    for (const [k, v] of Object.entries(data)) {
      // -f value: the values alone, one a line (osc-placement's show -f value, None for no value)
      if (this.format === 'value') this.log(recordValue(v))
      else this.log(`${k.padEnd(width)}  ${v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
    }
  }

  /**
   * How a command that carries out a plan ends: --json/--yaml print `answer` ({transport,
   * dry_run, applied, plan} and what the command adds; made only then: a big plan's document is
   * big); text runs `text`, then says that a dry run which would change something changed
   * nothing. A dry run then exits as the change would: with the error it would end with
   * (`refusal`), marked as a prediction.
   */
  protected endPlan(end: {
    answer: () => Record<string, unknown>
    dryRun: boolean
    changes: boolean
    refusal?: ApiError
    text?: () => void
  }): void {
    if (!this.textOutput) this.outputRecord(end.answer())
    else {
      end.text?.()
      if (end.dryRun && end.changes) this.log('Dry run: nothing was changed.')
    }
    if (end.refusal) throw withContext(end.refusal, 'dry run: the change would fail: ')
  }

  protected hint(err: Error): string {
    const reached = this.reached
    if (err instanceof UnreachableError && !(err instanceof CertificateError) && reached.via === 'local')
      return '; start one with `placemat daemon start`, or work on a file with --db FILE'
    if (err instanceof ApiError && err.status === 401 && (reached.via === 'local' || reached.via === 'url')) {
      if (reached.token)
        return `; the token from ${reached.token}${reached.token === 'the admin token file' ? ` ${reached.tokenFile}` : ''} was refused`
      if (reached.via === 'local')
        return `; no token was sent: the daemon's admin token file ${reached.tokenFile} is missing or unreadable (give --token or PLACEMAT_TOKEN)`
      return '; no token was sent: give --token, PLACEMAT_TOKEN or OS_TOKEN, or log in through Keystone (--os-cloud or OS_AUTH_URL)'
    }
    return ''
  }

  protected async finally(err: Error | undefined): Promise<any> {
    if (this.clientPromise) await (await this.clientPromise.catch(() => undefined))?.close()
    return super.finally(err)
  }
}

export type {Column}
