/**
 * GET /placemat/v1/capacity?flavor=NAME&level=LEVEL (each repeatable): the headroom of the
 * daemon's flavor catalog (core/headroom/headroom.ts) on the State as it is now, as `placemat capacity
 * --json` prints it. With without_each=LEVEL instead of levels: every host, rack, row or room
 * lost in turn (core/headroom/losses.ts), worked out on a copy, pausing between losses so that requests
 * are served meanwhile. With mix=NAME=WEIGHT,...: how many instances of that mix fit per domain
 * (core/headroom/flavor-mix.ts). With without=LEVEL:NAME and ratio=CLASS=R (each repeatable): a what-if,
 * made on a copy, as `placemat capacity --without/--ratio --json` answers it. 404 without a catalog (`daemon start --flavors FILE`), 400 for a flavor
 * the catalog does not hold or a level that is none of host, rack, row, room and cloud.
 */
import {PlacementError} from '../../core/errors.js'
import {flavorWarnings} from '../../core/headroom/flavors.js'
import {HEADROOM_LEVELS, headroomTable, releaseTable, type HeadroomLevel, type HeadroomTable} from '../../core/headroom/headroom.js'
import {lossesAnswer, lossesOneByOne, type Loss} from '../../core/headroom/losses.js'
import {mixAnswer, parseMix} from '../../core/headroom/flavor-mix.js'
import {lostDomainOf, ratioOf, whatIfHeadroom} from '../../core/headroom/what-if-headroom.js'
import type {LostDomain} from '../../core/headroom/what-if.js'
import {JsonText, queryParams, type AppOptions, type RouteDef} from '../context.js'
import {JsonStream, streams} from '../json-stream.js'
import {PLACEMAT_PREFIX} from './placemat.js'

export function routes(options: AppOptions): RouteDef[] {
  return [
    {
      method: 'GET',
      url: `${PLACEMAT_PREFIX}/capacity`,
      async handler(ctx) {
        const catalog = options.flavors?.flavors
        if (!catalog) throw new PlacementError(404, 'This daemon has no flavor catalog: start it with --flavors FILE.')
        const q = queryParams(ctx.req)
        const names = (q.get('flavor') ?? []).flatMap((v) => v.split(',')).filter(Boolean)
        const unknown = names.filter((n) => !catalog.some((f) => f.flavor === n))
        if (unknown.length)
          throw new PlacementError(
            400,
            `No flavor named ${unknown.join(', ')} in the catalog; it has ${catalog.map((f) => f.flavor).join(', ') || 'none'}.`,
          )
        const levels = (q.get('level') ?? []).flatMap((v) => v.split(',')).filter(Boolean)
        const bad = levels.find((l) => !HEADROOM_LEVELS.includes(l as HeadroomLevel))
        if (bad !== undefined) throw new PlacementError(400, `Invalid level ${bad}: one of ${HEADROOM_LEVELS.join(', ')}.`)
        const flavors = names.length ? catalog.filter((f) => names.includes(f.flavor)) : catalog
        const mixOf = q.get('mix') ?? []
        if (mixOf.length) {
          if (q.get('without_each')?.length) throw new PlacementError(400, 'Give mix or without_each, not both.')
          const mix = parseMix(mixOf.join(','), catalog)
          const s = await ctx.store.refresh()
          return {
            ...mixAnswer(s, mix, levels.length ? {levels: levels as HeadroomLevel[]} : {}),
            warnings: flavorWarnings(mix.map((m) => m.flavor)),
          }
        }
        const eachOf = q.get('without_each') ?? []
        if (eachOf.length) {
          const each = eachOf[eachOf.length - 1]
          if (!LOSS_LEVELS.includes(each as never))
            throw new PlacementError(400, `Invalid without_each ${each}: one of ${LOSS_LEVELS.join(', ')}.`)
          if (levels.length) throw new PlacementError(400, 'without_each answers for the cloud: give no level with it.')
          const losses: Loss[] = []
          let since = performance.now()
          for (const loss of lossesOneByOne(await ctx.store.refresh(), each as LostDomain['level'], flavors)) {
            losses.push(loss)
            if (performance.now() - since > PAUSE_AFTER_MS) {
              await new Promise((resolve) => setImmediate(resolve))
              since = performance.now()
            }
          }
          return {...lossesAnswer(each as LostDomain['level'], flavors, losses), warnings: flavorWarnings(flavors)}
        }
        const s = await ctx.store.refresh()
        // A what-if: made on a copy, the headroom after it beside the one before.
        const without = (q.get('without') ?? []).map(
          (v) => lostDomainOf(v) ?? badRequest(`Invalid without ${v}: host:NAME, rack:NAME, row:NAME or room:NAME.`),
        )
        const ratios = new Map((q.get('ratio') ?? []).map((v) => ratioOf(v) ?? badRequest(`Invalid ratio ${v}: CLASS=R, R above 0.`)))
        if (without.length || ratios.size)
          return {
            ...whatIfHeadroom(s, flavors, {without, ratios}, levels.length ? {levels: levels as HeadroomLevel[]} : {}),
            warnings: flavorWarnings(flavors),
          }
        const table = headroomTable(s, flavors, levels.length ? {levels: levels as HeadroomLevel[]} : {})
        const answer = capacityJson(table, flavorWarnings(flavors))
        // A small answer goes whole, with its length; a large one as it is written.
        return streams(options, table.fit.length) ? answer : new JsonText([...answer.pieces()].join(''))
      },
    },
  ]
}

const LOSS_LEVELS = ['host', 'rack', 'row', 'room'] as const
const badRequest = (detail: string): never => {
  throw new PlacementError(400, detail)
}
/** How long the losses are worked out before other requests are served (each loss takes a few ms). */
const PAUSE_AFTER_MS = 20

/** Rows written into one piece of the answer (~55 KB). */
const ROWS_A_PIECE = 512

/** Where a piece is written, reused: a fresh buffer per piece costs more than the writing (its pages are new to the process). */
let scratch = Buffer.alloc(0)

/**
 * The answer, {domains, stranded, lint, warnings}, as JSON.stringify writes it, made from the
 * table's columns in pieces: 10,000 hosts and 20 flavors are 200,000 rows (~20 MB), never made
 * objects. The rows are written as bytes (strings of that many parts cost more to join and encode
 * than to write), each piece handed on as a string of its own. The table's columns are released
 * once written, or when the answer is dropped.
 */
export function capacityJson(t: HeadroomTable, warnings: unknown): JsonStream {
  return new JsonStream(function* () {
    try {
      yield* rows(t)
      yield `],"stranded":${JSON.stringify(t.stranded)},"lint":${JSON.stringify(t.lint)},"warnings":${JSON.stringify(warnings)}}`
    } finally {
      releaseTable(t)
    }
  })
}

/** The rows of the answer's `domains`, a piece at a time. */
function* rows(t: HeadroomTable): Generator<string> {
  const D = t.levels.length
  // What each domain's rows start with, and each flavor, once.
  const heads = Bytes.of(t.levels.map((level, d) => `{"level":${JSON.stringify(level)},"name":${JSON.stringify(t.names[d])},"flavor":`))
  const flavors = Bytes.of(t.flavors.map((f) => JSON.stringify(f)))
  // Each binding by its number, and null (-1) last.
  const bindings = Bytes.of([...t.bindings.map((b) => JSON.stringify(b)), 'null'])
  const none = t.bindings.length
  // Four numbers of at most 24 characters each, the binding, their keys and a comma.
  const most =
    heads.longest +
    flavors.longest +
    4 * 24 +
    bindings.longest +
    FIT.length +
    POOLED.length +
    LOSS.length +
    DISABLED.length +
    BINDING.length +
    2
  yield '{"domains":['
  const rows = t.flavors.length * D
  for (let from = 0; from < rows; from += ROWS_A_PIECE) {
    const to = Math.min(rows, from + ROWS_A_PIECE)
    if (scratch.length < (to - from) * most) scratch = Buffer.allocUnsafe((to - from) * most)
    const out = scratch
    let at = 0
    for (let k = from; k < to; k++) {
      if (k) out[at++] = COMMA
      at = heads.copy(k % D, out, at)
      at = flavors.copy(Math.floor(k / D), out, at)
      at = number(t.fit[k], out, copy(FIT, out, at))
      at = number(t.pooled[k], out, copy(POOLED, out, at))
      at = number(t.fragmentation_loss[k], out, copy(LOSS, out, at))
      at = number(t.disabled_fit[k], out, copy(DISABLED, out, at))
      at = bindings.copy(t.binding[k] < 0 ? none : t.binding[k], out, copy(BINDING, out, at))
      out[at++] = CLOSE
    }
    yield out.toString('utf8', 0, at)
  }
}

/** Strings as UTF-8 in one buffer, each copied out by its number. */
class Bytes {
  private constructor(
    private readonly bytes: Buffer,
    private readonly starts: Int32Array,
    readonly longest: number,
  ) {}

  static of(strings: readonly string[]): Bytes {
    const bytes = Buffer.from(strings.join(''), 'utf8')
    const starts = new Int32Array(strings.length + 1)
    let longest = 0
    strings.forEach((x, i) => {
      const n = Buffer.byteLength(x, 'utf8')
      starts[i + 1] = starts[i] + n
      longest = Math.max(longest, n)
    })
    return new Bytes(bytes, starts, longest)
  }

  copy(i: number, out: Buffer, at: number): number {
    const {bytes, starts} = this
    for (let b = starts[i]; b < starts[i + 1]; b++) out[at++] = bytes[b]
    return at
  }
}

const ascii = (x: string): Uint8Array => Uint8Array.from(x, (c) => c.charCodeAt(0))
const FIT = ascii(',"fit":')
const POOLED = ascii(',"pooled":')
const LOSS = ascii(',"fragmentation_loss":')
const DISABLED = ascii(',"disabled_fit":')
const BINDING = ascii(',"binding":')
const COMMA = 0x2c
const CLOSE = 0x7d

function copy(x: Uint8Array, out: Buffer, at: number): number {
  for (let b = 0; b < x.length; b++) out[at++] = x[b]
  return at
}

/** A number as JSON writes it (null when not finite): a whole one below 2^31 digit by digit. */
function number(x: number, out: Buffer, at: number): number {
  if (x >= 0 && x < 2147483648 && x === Math.floor(x)) {
    let n = x
    let digits = 1
    for (let p = 10; p <= n; p *= 10) digits++
    for (let d = at + digits - 1; d >= at; d--) {
      out[d] = 0x30 + (n % 10)
      n = Math.floor(n / 10)
    }
    return at + digits
  }
  return at + out.write(Number.isFinite(x) ? String(x) : 'null', at, 'latin1')
}
