/**
 * The follower: the one part of the store that moves the State's applied position in the
 * journal (journal.ts). It loads the State whole (at start, when the journal has expired past
 * our position, or when the State is half applied or unsure of too much), applies windows of
 * keys read again as rows, and catches up from the images other nodes recorded (a server: PostgreSQL, MariaDB).
 * Writes that commit tell it where they took the position (committedLocked, committedAt).
 */
import {sql, type CompiledQuery} from 'kysely'
import {keepIndexCurrent} from '../core/candidates/provider-index.js'
import type {Changes} from '../core/state/changes.js'
import type {State} from '../core/state/state.js'
import type {Backend, Row, Session} from './backends.js'
import {
  MAX_PATCH_KEYS,
  aheadStatement,
  headStatement,
  imageWindows,
  keysStatement,
  readAhead,
  readHead,
  readKeys,
  readWindow,
  rowStatements,
  unsureKeys,
  windowsBefore,
  type Ahead,
  type Head,
  type JournalRow,
  type Window,
} from './journal.js'
import {decodeStateImage, encodeStateImage, type StateImage} from '../core/state/image.js'
import {loadTables} from './state-loader.js'
import {STATE_IMAGE_KEY, type StateImageFile} from './state-image-file.js'
import {applyWindow} from './state-patch.js'
import {imageRows, type ImageRows, type StateWriter} from './state-writer.js'
import type {StoreHooks} from './store-types.js'

export class Follower {
  /** The journal position the State reflects. */
  private at = 0
  /** The newest journal position this process has seen in the database (health: how far behind it is). */
  private newest = 0
  /** The change mark at which the State was last known current (-1: ask the database). */
  private mark = -1
  /**
   * Keys a failed write (or a rehearsal) left the State unsure of: read again from the database
   * with the next catch-up; 'all' when there are too many to name (the State is loaded again).
   */
  private suspect: JournalRow[] | 'all' | null = null
  /** A server: the last probe's head and images, while the State is still at their `from`. */
  private ahead: (Ahead & {from: number}) | null = null
  /** A server: when another node's commit was last applied. */
  private othersWrote = -Infinity
  /** How many times the State was loaded whole. */
  private wholeLoads = 0
  /** True while the State is being loaded whole. */
  private loadingWhole = false
  /** True while the State holds what is not committed (a write between its turn and COMMIT, a load). */
  private dirty = false

  constructor(
    private readonly state: State,
    private readonly backend: Backend,
    private readonly writer: StateWriter,
    private readonly hooks: Pick<StoreHooks, 'observer'>,
  ) {}

  get position(): number {
    return this.at
  }

  get head(): number {
    return this.newest
  }

  get seenMark(): number {
    return this.mark
  }

  get loading(): boolean {
    return this.loadingWhole
  }

  /** When another node's commit was last applied (performance.now()). */
  get othersWroteAt(): number {
    return this.othersWrote
  }

  /** Whether the State holds what is not committed (a write between its turn and COMMIT, a load). */
  get holdsUncommitted(): boolean {
    return this.dirty
  }

  /** A group of writes starts changing the State: it holds what is not committed until `settled()`. */
  changing(): void {
    this.dirty = true
  }

  /** The group's changes are committed, refused or distrusted: the State holds nothing uncommitted. */
  settled(): void {
    this.dirty = false
  }

  /** Whether a failed write or a rehearsal left the State unsure of something. */
  get unsureOfSomething(): boolean {
    return this.suspect !== null
  }

  private get storageOrder(): 'rowid' | 'ctid' | 'primary-key' {
    return this.backend.storageOrder
  }

  private get db() {
    return this.backend.db
  }

  /** The State is current as of change mark `mark`. */
  seen(mark: number): void {
    this.mark = mark
  }

  /** The database was seen at journal position `counter`. */
  sawHead(counter: number): void {
    this.newest = Math.max(this.newest, counter)
  }

  /** Whether the State holds all the database held when the change mark was last asked. */
  currentAsFarAsKnown(): boolean {
    return this.at >= 0 && this.mark === this.at && this.newest <= this.at && !this.suspect && !this.dirty
  }

  /** The State changed: a new version, and the provider index follows it now (the next query does not wait for it). */
  publish(): void {
    this.state.version += 1
    keepIndexCurrent(this.state)
  }

  /**
   * Loads the State whole from one consistent snapshot: a read snapshot of its own, or (`inWrite`)
   * the write transaction already open on `s`, whose lock keeps every other writer out.
   */
  async load(s: Session, reason: string | null, inWrite = false): Promise<void> {
    this.loadingWhole = true
    const wasDirty = this.dirty
    this.dirty = true
    try {
      await this.loadWhole(s, reason, inWrite)
    } finally {
      this.loadingWhole = false
      this.dirty = wasDirty
    }
  }

  private async loadWhole(s: Session, reason: string | null, inWrite: boolean): Promise<void> {
    const t0 = performance.now()
    this.wholeLoads++
    const db = this.db
    const [head] = (await s.run([...(inWrite ? [] : this.backend.beginRead()), headStatement(db)])).slice(inWrite ? 0 : -1)
    const st = this.state
    // Until it is whole, the State is not what any position says.
    this.at = -1
    this.mark = -1
    this.clear()
    this.writer.nextSeq = await loadTables(s, db, st)
    if (!inWrite) await s.run([sql`commit`.compile(db)])
    const h = readHead(head)
    st.topologyGeneration = h.topologyGeneration
    st.version += 1
    this.at = h.counter
    this.newest = Math.max(this.newest, h.counter)
    this.suspect = null
    if (reason !== null) {
      this.hooks.observer?.reloaded?.(reason, (performance.now() - t0) / 1000)
    }
  }

  /**
   * At start, from the image a daemon left at its last clean stop (state-image-file.ts): the
   * State as it was at the image's position, then what the journal says changed since, all in
   * one read snapshot. The State is loaded from the database instead when the image is not of
   * this database's history (the token it records is another), is ahead of it, or the journal no
   * longer reaches back to it. Answers where the State came from.
   */
  async loadFromImage(s: Session, file: StateImageFile): Promise<'image' | 'database'> {
    this.loadingWhole = true
    const wasDirty = this.dirty
    this.dirty = true
    try {
      const db = this.db
      const opening = this.backend.beginRead()
      const token = db.selectFrom('placemat_meta').select('value').where('key', '=', STATE_IMAGE_KEY).compile()
      const [headRows, tokenRows, keyRows] = (await s.run([...opening, headStatement(db), token, keysStatement(db, file.image.at)])).slice(
        opening.length,
      )
      const head = readHead(headRows)
      const since = readKeys(keyRows)
      const fits =
        tokenRows[0]?.value === file.token && file.image.at <= head.counter && file.image.at >= head.floor && !since.large && !since.unknown
      if (fits && this.decode(file.image)) {
        this.state.version += 1
        this.writer.nextSeq = file.image.nextSeq
        this.at = file.image.at
        this.newest = Math.max(this.newest, head.counter)
        this.suspect = null
        // What others committed since the image, in this snapshot (or a load whole: too much).
        const loads = this.wholeLoads
        await this.applySince(s, head, keyRows, false, [sql`commit`.compile(db)])
        return this.wholeLoads === loads ? 'image' : 'database'
      }
      await s.run([sql`commit`.compile(db)])
      await this.loadWhole(s, null, false)
      return 'database'
    } finally {
      this.loadingWhole = false
      this.dirty = wasDirty
    }
  }

  /** Makes the empty State what `image` holds; false, leaving it empty, when the image is not whole. */
  private decode(image: StateImage): boolean {
    this.at = -1
    this.mark = -1
    this.clear()
    try {
      decodeStateImage(image, this.state)
      return true
    } catch {
      this.clear()
      return false
    }
  }

  /** The State as an image (a daemon stopping cleanly), or null when it holds what is not committed or is unsure of something. */
  stateImage(): StateImage | null {
    if (this.at < 0 || this.dirty || this.suspect !== null) return null
    return encodeStateImage(this.state, this.at, this.writer.nextSeq)
  }

  /** Empties the State, for a load. */
  private clear(): void {
    const st = this.state
    st.providers.clear()
    st.providerByName.clear()
    st.consumers.clear()
    st.classes.clear()
    st.traits.clear()
    st.aggregateMembers.clear()
    st.topology.clear()
    st.groups.clear()
    st.moved.clear()
    st.aggregateNames.clear()
    st.reshapedAll()
  }

  /**
   * Makes the State what the window says (or loads it whole when the window is out of reach),
   * with the keys a failed write left unsure read again in the same snapshot.
   */
  private async apply(s: Session, w: Window, inWrite: boolean): Promise<void> {
    this.newest = Math.max(this.newest, w.head.counter)
    if (w.head.counter === this.at && !this.suspect) return
    if (this.at < w.head.floor || w.large || w.unknown || this.suspect === 'all') {
      const reason =
        this.suspect === 'all'
          ? 'a failed write or a rehearsal touched too much to read again'
          : this.at < w.head.floor
            ? `fell behind the journal (at ${this.at}, pruned to ${w.head.floor})`
            : w.unknown
              ? 'the journal names a change of a kind this release does not know (a newer release wrote it)'
              : `more than ${MAX_PATCH_KEYS} changes to apply`
      return this.load(s, reason, inWrite)
    }
    const t0 = performance.now()
    const maxSeq = applyWindow(this.state, w, this.writer.nextSeq)
    this.writer.nextSeq = Math.max(this.writer.nextSeq, maxSeq + 1)
    this.at = w.head.counter
    this.suspect = null
    this.publish()
    this.hooks.observer?.caughtUp?.(w.keys.length, (performance.now() - t0) / 1000, 'rows')
  }

  /**
   * A server: how a write records its rows for the other nodes (its image), taken from the
   * State once the write has run. SQLite's followers read rows from the file at no round trip.
   */
  image(): ((ch: Changes) => ImageRows) | null {
    return this.backend.server ? (ch) => imageRows(this.state, ch) : null
  }

  /**
   * A server: catches up from the images of the transactions since our position, in one round
   * trip and one snapshot: the head with the images (aheadStatement), and the rows of the keys a
   * failed or overtaken write left unsure, read again. False when an image is missing (a large
   * change, a pruned journal, a node far behind) or everything is unsure: the caller reads the
   * window's rows instead (followRows).
   */
  async followImages(): Promise<boolean> {
    if (!this.canFollowImages()) return false
    // What the last probe read from this position, if nothing was applied since: no round trip.
    if (!this.unsure().length && this.ahead?.from === this.at) {
      const ahead = this.ahead
      this.ahead = null
      return this.applyAhead(ahead, [], [], [])
    }
    this.ahead = null
    return this.backend.session((s) => this.readAndApplyAhead(s, this.backend.beginRead(), [sql`commit`.compile(this.db)]))
  }

  private canFollowImages(): boolean {
    return this.backend.server && this.suspect !== 'all' && this.at >= 0
  }

  /**
   * `opening` (sent and emptied), the head with the images since our position and the unsure
   * keys' rows, then `closing`, in one round trip; applied as applyAhead does.
   */
  private async readAndApplyAhead(s: Session, opening: CompiledQuery[], closing: CompiledQuery[]): Promise<boolean> {
    const unsure = this.unsure()
    const again = rowStatements(this.db, unsure, this.storageOrder)
    const results = await s.run([...opening, aheadStatement(this.db, this.at), ...again.map(([, q]) => q), ...closing])
    const sent = opening.length
    opening.length = 0
    const ahead = readAhead(results[sent])
    this.newest = Math.max(this.newest, ahead.head.counter)
    return this.applyAhead(ahead, unsure, again, results.slice(sent + 1, sent + 1 + again.length))
  }

  /**
   * Applies what aheadStatement read (the images since our position), then the rows read in the
   * same snapshot for the unsure keys; false, changing nothing, when the images are not whole.
   */
  private applyAhead(ahead: Ahead, unsure: JournalRow[], again: ReturnType<typeof rowStatements>, rows: Row[][]): boolean {
    const {head, images} = ahead
    const windows = imageWindows(head, this.at, images)
    if (!windows) return false
    if (windows.length === 0 && unsure.length === 0) return true
    this.applyImages(windows)
    this.at = head.counter
    if (unsure.length) {
      const t0 = performance.now()
      this.writer.nextSeq = Math.max(
        this.writer.nextSeq,
        applyWindow(this.state, readWindow(head, {keys: unsure, large: false}, again, rows), this.writer.nextSeq) + 1,
      )
      this.suspect = null
      this.hooks.observer?.caughtUp?.(unsure.length, (performance.now() - t0) / 1000, 'rows')
    }
    this.publish()
    return true
  }

  /**
   * In a write, on `s`: BEGIN and the lock (`opening`, emptied once sent), then what others
   * committed since our position. A server: from their images, with the unsure keys' rows, in
   * that one round trip (nobody commits while we hold the lock); else (or when that cannot do)
   * the head and the journal's keys, then the rows those name only when there are any.
   */
  async catchUpUnderLock(s: Session, opening: CompiledQuery[]): Promise<void> {
    if (this.canFollowImages() && (await this.readAndApplyAhead(s, opening, []))) return
    // SQLite: the lock taken, a change mark unmoved since the State was last current says nobody
    // else committed (our own commits leave it); the journal need not be asked. As reads decide.
    if (!this.backend.server && this.mark >= 0 && this.at >= 0 && this.suspect === null) {
      await s.run(opening)
      opening.length = 0
      if (this.backend.changeMark() === this.mark) return
    }
    const [headRows, keyRows] = (await s.run([...opening, headStatement(this.db), this.keysStatement()])).slice(opening.length)
    opening.length = 0
    const head = readHead(headRows)
    if (head.counter !== this.at || this.suspect) await this.applySince(s, head, keyRows, true, [])
    // SQLite: nobody can commit while we hold the lock, so the mark now is the one the State is current at.
    if (!this.backend.server) this.mark = this.backend.changeMark() as number
  }

  /** One snapshot of its own: the head and the keys after our position, then the rows they name. */
  followRows(): Promise<void> {
    return this.backend.session(async (s) => {
      const opening = this.backend.beginRead()
      const [headRows, keyRows] = (await s.run([...opening, headStatement(this.db), this.keysStatement()])).slice(opening.length)
      await this.applySince(s, readHead(headRows), keyRows, false, [sql`commit`.compile(this.db)])
    })
  }

  /** Applies other processes' transactions from their images, in order. */
  private applyImages(windows: Window[]): void {
    if (windows.length === 0) return
    const t0 = performance.now()
    this.othersWrote = t0
    let keys = 0
    try {
      for (const w of windows) {
        this.writer.nextSeq = Math.max(this.writer.nextSeq, applyWindow(this.state, w, this.writer.nextSeq) + 1)
        keys += w.keys.length
      }
    } catch (err) {
      // Half applied: what the State holds is not what any position says.
      this.suspect = 'all'
      throw err
    }
    this.hooks.observer?.caughtUp?.(keys, (performance.now() - t0) / 1000, 'images')
  }

  /** The statement that reads the journal's keys after our position (none while the State is not whole). */
  private keysStatement(): CompiledQuery {
    return keysStatement(this.db, this.at < 0 ? Number.MAX_SAFE_INTEGER : this.at)
  }

  /**
   * Reads the rows that the keys after our position (and the keys a failed write left unsure)
   * name, on `s` inside the transaction it has open, then `close`, and applies them: one round
   * trip, and none when nothing is to be read.
   */
  private async applySince(s: Session, head: Head, keyRows: Row[], inWrite: boolean, close: CompiledQuery[]): Promise<void> {
    const journal = readKeys(keyRows)
    const keys = {keys: [...this.unsure(), ...journal.keys], large: journal.large, unknown: journal.unknown}
    const patching = !(journal.large || journal.unknown || this.at < head.floor || this.suspect === 'all')
    const statements = patching ? rowStatements(this.db, keys.keys, this.storageOrder) : []
    const results = statements.length || close.length ? await s.run([...statements.map(([, q]) => q), ...close]) : []
    await this.apply(s, readWindow(head, keys, statements, results), inWrite)
  }

  private unsure(): JournalRow[] {
    return Array.isArray(this.suspect) ? this.suspect : []
  }

  /**
   * A server: the head and the images after our position, in one round trip. Kept until the
   * State moves, so that the catch-up it shows is needed reads nothing more.
   */
  async readAhead(): Promise<Ahead & {from: number}> {
    const from = this.at
    const [rows] = await this.backend.session((s) => s.run([aheadStatement(this.db, from < 0 ? Number.MAX_SAFE_INTEGER : from)]))
    const ahead = {...readAhead(rows), from}
    this.newest = Math.max(this.newest, ahead.head.counter)
    if (ahead.head.counter > from && from === this.at) this.ahead = ahead
    return ahead
  }

  /** Marks what `changes` touched as unsure: the next catch-up reads it again. */
  distrust(changes: Changes): void {
    if (changes.empty) return
    this.mark = -1
    if (this.suspect === 'all') return
    const keys = [...(this.suspect ?? []), ...unsureKeys(changes)]
    this.suspect = keys.length > MAX_PATCH_KEYS ? 'all' : keys
  }

  /** A write holding the lock committed transaction `seq`: the State is at it. */
  committedLocked(seq: number): void {
    this.at = seq
    if (this.backend.server) this.mark = seq
    this.newest = Math.max(this.newest, seq)
  }

  /**
   * A write made in one round trip committed the transaction after `base`; `images` (a keyed
   * commit) are those others recorded before it, which the State holds only once applied here.
   */
  committedAt(base: number, images: Row[] | 'committed'): void {
    this.at = base + 1
    if (Array.isArray(images)) {
      try {
        const {windows, seq} = windowsBefore(images, base, this.state.topologyGeneration)
        this.applyImages(windows)
        this.at = seq
      } catch {
        // Committed all the same: the write is answered as such, and the State, holding it but
        // not what others committed before it, is loaded again before it serves anything.
        this.suspect = 'all'
      }
    }
    this.mark = this.at
    this.newest = Math.max(this.newest, this.at)
  }
}
