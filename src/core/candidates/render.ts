/**
 * Response bodies of GET /allocation_candidates per microversion
 * (placement/handlers/allocation_candidate.py): plain JSON-ready objects. Parts of the output
 * (provider summary objects, trait lists) may be shared between responses: serialize, do not
 * mutate.
 */
import {
  allocationRequestOf,
  candidateSlots,
  type AllocationRequest,
  type CandidateResult,
  type CandidateSlots,
  type ProviderSummary,
} from './engine.js'
import type {Provider} from '../state/state.js'
import type {Microversion} from './request.js'

const atLeast = (v: Microversion, minor: number) => v[0] > 1 || (v[0] === 1 && v[1] >= minor)

export interface CandidatesBody {
  allocation_requests: unknown[]
  provider_summaries: Record<string, unknown>
}

/**
 * allocation_requests: list form below 1.12 ({allocations: [{resource_provider: {uuid},
 * resources}]}), dict form from 1.12 ({allocations: {uuid: {resources}}}) with `mappings` from
 * 1.34. provider_summaries: resources (capacity, used) of the requested classes only below 1.27,
 * of every inventory from 1.27; traits from 1.17; parent/root provider uuids from 1.29.
 */
export function renderCandidates(result: CandidateResult, version: Microversion): CandidatesBody {
  const dictForm = atLeast(version, 12)
  const withMappings = atLeast(version, 34)
  const ars = result.allocationRequests
  const allocation_requests: unknown[] = new Array(ars.length)
  for (let i = 0; i < ars.length; i++) {
    const ar = ars[i]
    if (dictForm) {
      const allocations: Record<string, {resources: Record<string, number>}> = {}
      for (const [uuid, res] of ar.allocations) allocations[uuid] = {resources: amounts(res)}
      if (withMappings) {
        const mappings: Record<string, string[]> = {}
        for (const [suffix, uuids] of ar.mappings) mappings[suffix] = uuids
        allocation_requests[i] = {allocations, mappings}
      } else allocation_requests[i] = {allocations}
    } else {
      const allocations: unknown[] = []
      for (const [uuid, res] of ar.allocations) allocations.push({resource_provider: {uuid}, resources: amounts(res)})
      allocation_requests[i] = {allocations}
    }
  }
  return {allocation_requests, provider_summaries: renderSummaries(result.providerSummaries, result.requestedClasses, version)}
}

function amounts(res: Map<string, number>): Record<string, number> {
  const o: Record<string, number> = {}
  for (const [rc, n] of res) o[rc] = n
  return o
}

// Rendered summaries of the common formats, per (immutable, cached) ProviderSummary object.
const cache27 = new WeakMap<ProviderSummary, unknown>()
const cache29 = new WeakMap<ProviderSummary, unknown>()

function renderSummaries(summaries: ProviderSummary[], requested: Set<string>, version: Microversion): Record<string, unknown> {
  const allResources = atLeast(version, 27)
  const withTraits = atLeast(version, 17)
  const nested = atLeast(version, 29)
  const cache = nested ? cache29 : allResources ? cache27 : null
  const out: Record<string, unknown> = {}
  for (const s of summaries) {
    let o = cache?.get(s)
    if (!o) {
      const resources: Record<string, {capacity: number; used: number}> = {}
      for (const r of s.resources) {
        if (allResources || requested.has(r.rc)) resources[r.rc] = {capacity: r.capacity, used: r.used}
      }
      const body: Record<string, unknown> = {resources}
      if (withTraits) body.traits = s.traits
      if (nested) {
        body.parent_provider_uuid = s.parentUuid
        body.root_provider_uuid = s.rootUuid
      }
      o = body
      cache?.set(s, o)
    }
    out[s.uuid] = o
  }
  return out
}

// ---- direct serialization ---------------------------------------------------------------------
// The same document as JSON.stringify(renderCandidates(...)), written straight to bytes. Most of
// a large answer is provider summaries, whose bytes are cached per summary object (summaries are
// shared and immutable while their provider's usage holds), and allocation requests, which
// differ only in their providers: each is written from a template of constant bytes per
// pattern of slot providers, with the providers' quoted uuids (cached) in between.
// The document is written in pieces (renderCandidatesJson: one piece; candidatesJsonPieces: a
// piece each time some bytes are written), so a streamed answer never exists whole.

const SAFE = /^[A-Za-z0-9_.:-]*$/
const str = (s: string) => (SAFE.test(s) ? `"${s}"` : JSON.stringify(s))

/** A growing byte buffer. */
class ByteWriter {
  buf: Buffer
  pos = 0
  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(Math.max(size, 256))
  }
  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n))
    this.buf.copy(bigger, 0, 0, this.pos)
    this.buf = bigger
  }
  bytes(b: Uint8Array): void {
    this.room(b.length)
    this.buf.set(b, this.pos)
    this.pos += b.length
  }
  text(s: string): void {
    this.room(s.length * 3)
    this.pos += this.buf.write(s, this.pos)
  }
  done(): Buffer {
    return this.buf.subarray(0, this.pos)
  }
  /** What is written so far, handed over: the writer goes on in a buffer of its own. */
  take(): Buffer {
    const out = this.done()
    this.buf = Buffer.allocUnsafe(this.buf.length)
    this.pos = 0
    return out
  }
}

/** How the document is cut and whether its bytes are kept for later answers. */
interface Writing {
  w: ByteWriter
  /** A piece is handed over once this many bytes are written (Infinity: the whole document at the end). */
  pieceBytes: number
  /**
   * Cache the bytes of summaries, trees and uuids for the next answers. Off for a streamed
   * answer: its caches would hold the whole document again.
   */
  remember: boolean
}

function amountsText(res: Map<string, number>): string {
  let out = '{'
  let first = true
  for (const [rc, n] of res) {
    out += (first ? '' : ',') + str(rc) + ':' + n
    first = false
  }
  return out + '}'
}

/** One element of allocation_requests. */
function allocationRequestText(ar: AllocationRequest, dictForm: boolean, withMappings: boolean): string {
  let out = '{"allocations":'
  let first = true
  if (dictForm) {
    out += '{'
    for (const [uuid, res] of ar.allocations) {
      out += (first ? '' : ',') + str(uuid) + ':{"resources":' + amountsText(res) + '}'
      first = false
    }
    out += '}'
    if (withMappings) {
      const mappings: Record<string, string[]> = {}
      for (const [suffix, uuids] of ar.mappings) mappings[suffix] = uuids
      out += ',"mappings":' + JSON.stringify(mappings)
    }
  } else {
    out += '['
    for (const [uuid, res] of ar.allocations) {
      out += (first ? '' : ',') + '{"resource_provider":{"uuid":' + str(uuid) + '},"resources":' + amountsText(res) + '}'
      first = false
    }
    out += ']'
  }
  return out + '}'
}

const bytes27 = new WeakMap<ProviderSummary, Buffer>()
const bytes29 = new WeakMap<ProviderSummary, Buffer>()
const NO_CLASSES = new Set<string>()

/** `"uuid":{...}`: one provider_summaries entry. */
function summaryText(s: ProviderSummary, requested: Set<string>, version: Microversion): string {
  const allResources = atLeast(version, 27)
  let out = str(s.uuid) + ':{"resources":{'
  let first = true
  for (const r of s.resources) {
    if (!allResources && !requested.has(r.rc)) continue
    out += (first ? '' : ',') + str(r.rc) + ':{"capacity":' + r.capacity + ',"used":' + r.used + '}'
    first = false
  }
  out += '}'
  if (atLeast(version, 17)) out += ',"traits":' + (s.traits.length ? '[' + s.traits.map(str).join(',') + ']' : '[]')
  if (atLeast(version, 29)) {
    out += ',"parent_provider_uuid":' + (s.parentUuid === null ? 'null' : str(s.parentUuid))
    out += ',"root_provider_uuid":' + str(s.rootUuid)
  }
  return out + '}'
}

function summaryBytes(s: ProviderSummary, cache: WeakMap<ProviderSummary, Buffer>, version: Microversion): Buffer {
  let b = cache.get(s)
  if (!b) cache.set(s, (b = Buffer.from(summaryText(s, NO_CLASSES, version))))
  return b
}

/** The entries of one tree, comma-joined: valid while its summary objects are the same. */
interface TreeBytes {
  members: ProviderSummary[]
  bytes: Buffer
}
const treeBytes27 = new WeakMap<ProviderSummary, TreeBytes>()
const treeBytes29 = new WeakMap<ProviderSummary, TreeBytes>()

function* writeSummaries(out: Writing, summaries: ProviderSummary[], requested: Set<string>, version: Microversion): Generator<Buffer> {
  const {w, pieceBytes, remember} = out
  if (!atLeast(version, 27)) {
    // Below 1.27 an entry depends on the requested classes: not cached.
    for (let i = 0; i < summaries.length; i++) {
      w.text((i ? ',' : '') + summaryText(summaries[i], requested, version))
      if (w.pos >= pieceBytes) yield w.take()
    }
    return
  }
  const nested = atLeast(version, 29)
  const cache = nested ? bytes29 : bytes27
  const trees = nested ? treeBytes29 : treeBytes27
  // Summaries come tree by tree: each run of one root is written from its cached bytes.
  for (let i = 0; i < summaries.length; ) {
    const first = summaries[i]
    let end = i + 1
    while (end < summaries.length && summaries[end].rootUuid === first.rootUuid) end++
    if (i) w.bytes(COMMA)
    let t = trees.get(first)
    let same = t !== undefined && t.members.length === end - i
    for (let k = i; same && k < end; k++) same = t!.members[k - i] === summaries[k]
    if (!same && remember) {
      const members = summaries.slice(i, end)
      const parts: Buffer[] = []
      for (const m of members) parts.push(parts.length ? COMMA : EMPTY, summaryBytes(m, cache, version))
      t = {members, bytes: Buffer.concat(parts)}
      trees.set(first, t)
      same = true
    }
    if (same) w.bytes(t!.bytes)
    else {
      for (let k = i; k < end; k++) {
        if (k > i) w.bytes(COMMA)
        const b = cache.get(summaries[k])
        if (b) w.bytes(b)
        else w.text(summaryText(summaries[k], NO_CLASSES, version))
      }
    }
    if (w.pos >= pieceBytes) yield w.take()
    i = end
  }
}

const EMPTY = Buffer.alloc(0)
const COMMA = Buffer.from(',')
const quotedUuids = new WeakMap<Provider, Buffer>()

function quotedUuid(p: Provider): Buffer {
  let b = quotedUuids.get(p)
  if (!b) quotedUuids.set(p, (b = Buffer.from(JSON.stringify(p.uuid))))
  return b
}

/**
 * An allocation request for one pattern of equal slot providers: constant bytes pieces[0],
 * then the uuid of slot refs[0], pieces[1], and so on.
 */
interface Template {
  pieces: Buffer[]
  refs: number[]
}

function makeTemplate(slots: CandidateSlots, same: Int32Array, dictForm: boolean, withMappings: boolean): Template {
  // Placeholder uuids: slot d stands for its first slot with the same provider.
  const uuids = Array.from(same, (first) => `@${first}@`)
  const text = allocationRequestText(allocationRequestOf(slots, uuids), dictForm, withMappings)
  const pieces: Buffer[] = []
  const refs: number[] = []
  let from = 0
  for (const m of text.matchAll(/"@(\d+)@"/g)) {
    pieces.push(Buffer.from(text.slice(from, m.index)))
    refs.push(Number(m[1]))
    from = m.index! + m[0].length
  }
  pieces.push(Buffer.from(text.slice(from)))
  return {pieces, refs}
}

function* writeAllocationRequests(out: Writing, slots: CandidateSlots, dictForm: boolean, withMappings: boolean): Generator<Buffer> {
  const {w, pieceBytes, remember} = out
  const {S, rows, providers} = slots
  const templates = new Map<string, Template>()
  const same = new Int32Array(S)
  for (let at = 0, k = 0; at < rows.length; at += S, k++) {
    // Which earlier slot (if any) has the same provider: the pattern picks the template.
    let key = ''
    for (let d = 0; d < S; d++) {
      let e = 0
      while (rows[at + e] !== rows[at + d]) e++
      same[d] = e
      key += e + ','
    }
    let t = templates.get(key)
    if (!t) templates.set(key, (t = makeTemplate(slots, same, dictForm, withMappings)))
    if (k) w.bytes(COMMA)
    const {pieces, refs} = t
    for (let j = 0; j < refs.length; j++) {
      w.bytes(pieces[j])
      const p = providers[rows[at + refs[j]]]
      const quoted = remember ? quotedUuid(p) : quotedUuids.get(p)
      if (quoted) w.bytes(quoted)
      else w.text(JSON.stringify(p.uuid))
    }
    w.bytes(pieces[refs.length])
    if (w.pos >= pieceBytes) yield w.take()
  }
}

/** The document in pieces, each handed over once `pieceBytes` are written; the rest at the end. */
function* writeCandidates(
  result: CandidateResult,
  slots: CandidateSlots | undefined,
  version: Microversion,
  pieceBytes: number,
  remember: boolean,
): Generator<Buffer> {
  const dictForm = atLeast(version, 12)
  const withMappings = atLeast(version, 34)
  const whole = 1024 + result.providerSummaries.length * 300 + (slots ? slots.rows.length * 120 : 0)
  const w = new ByteWriter(Math.min(whole, pieceBytes + (pieceBytes >> 2)))
  const out: Writing = {w, pieceBytes, remember}
  w.text('{"allocation_requests":[')
  if (slots) yield* writeAllocationRequests(out, slots, dictForm, withMappings)
  else {
    const ars = result.allocationRequests
    for (let i = 0; i < ars.length; i++) {
      w.text((i ? ',' : '') + allocationRequestText(ars[i], dictForm, withMappings))
      if (w.pos >= pieceBytes) yield w.take()
    }
  }
  w.text('],"provider_summaries":{')
  yield* writeSummaries(out, result.providerSummaries, result.requestedClasses, version)
  w.text('}}')
  yield w.done()
}

/** renderCandidates, serialized: byte for byte JSON.stringify's UTF-8, faster. */
export function renderCandidatesJson(result: CandidateResult, version: Microversion): Buffer {
  const [whole] = writeCandidates(result, candidateSlots(result), version, Infinity, true)
  return whole
}

/** Bytes a streamed piece holds before it is handed over. */
export const PIECE_BYTES = 256 * 1024

/**
 * renderCandidatesJson's bytes in pieces of about `pieceBytes`, written as they are read: the
 * whole document never exists (a million candidates is some 400 MB of JSON). Caches nothing.
 * The answer is the result's as it is at this call, whatever is written meanwhile.
 */
export function candidatesJsonPieces(result: CandidateResult, version: Microversion, pieceBytes = PIECE_BYTES): Iterable<Buffer> {
  // The slots' providers as they are now: writes served between two pieces patch the index's
  // provider list in place.
  const slots = candidateSlots(result)
  const fixed = slots && {...slots, providers: slots.providers.slice()}
  return writeCandidates(result, fixed, version, pieceBytes, false)
}

/** How many allocation requests a result holds, without building them. */
export function candidateCount(result: CandidateResult): number {
  const slots = candidateSlots(result)
  return slots ? (slots.S ? slots.rows.length / slots.S : 0) : result.allocationRequests.length
}
