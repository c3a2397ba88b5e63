// The first limited candidates query after a write: a write on node A, the query on node B (or a
// write by the CLI on the SQLite file, the query on the daemon), timed; beside it the same query
// with nothing written before it (what catching up adds).
import {execFileSync} from 'node:child_process'
import path from 'node:path'
import {AGGREGATES} from '../huge-sets.mjs'
import {pct} from '../lib/stats.mjs'
import {call, must} from './http.mjs'
import {progress} from './running.mjs'

const AW_QUERY = `resources=VCPU:1,DISK_GB:10,MEMORY_MB:256&member_of=${AGGREGATES[0]}&required=HW_CPU_X86_AVX2`
const EXTRA_AGGREGATE = '00000000-0000-4000-8000-00000000b0b0'

/**
 * Round `r`'s write to provider `u`, read from `readUrl` (inventory reserved 0 <-> 1 on VCPU, traits
 * with or without CUSTOM_BENCH, aggregates with or without an extra one, in turn): the new value,
 * the generation it was read at, and what an answer showing it would say.
 */
async function prepareWrite(readUrl, u, r) {
  const kind = ['inventory', 'traits', 'aggregates'][r % 3]
  if (kind === 'inventory') {
    const cur = await must(readUrl, 'GET', `/resource_providers/${u}/inventories`)
    const inventories = cur.inventories
    const reserved = inventories.VCPU.reserved ? 0 : 1
    inventories.VCPU = {...inventories.VCPU, reserved}
    const capacity = (inventories.VCPU.total - reserved) * inventories.VCPU.allocation_ratio
    return {kind, generation: cur.resource_provider_generation, inventories, reserved, capacity}
  }
  if (kind === 'traits') {
    const cur = await must(readUrl, 'GET', `/resource_providers/${u}/traits`)
    const has = cur.traits.includes('CUSTOM_BENCH')
    const traits = has ? cur.traits.filter((t) => t !== 'CUSTOM_BENCH') : [...cur.traits, 'CUSTOM_BENCH']
    return {kind, generation: cur.resource_provider_generation, traits, bench: !has}
  }
  const cur = await must(readUrl, 'GET', `/resource_providers/${u}/aggregates`)
  const has = cur.aggregates.includes(EXTRA_AGGREGATE)
  const aggregates = has ? cur.aggregates.filter((a) => a !== EXTRA_AGGREGATE) : [...cur.aggregates, EXTRA_AGGREGATE]
  return {kind, generation: cur.resource_provider_generation, aggregates}
}

/** Whether the answer shows the write (inventory capacity, traits); null when it cannot say. */
function showsWrite(answer, u, w) {
  const summary = answer?.provider_summaries?.[u]
  if (!summary) return null
  if (w.kind === 'inventory') return summary.resources?.VCPU?.capacity === w.capacity
  if (w.kind === 'traits') return Array.isArray(summary.traits) ? summary.traits.includes('CUSTOM_BENCH') === w.bench : null
  return null
}

// The limit the churn's schedulers use; the providers written to are among its answer, so that
// the timed answer itself shows whether the write was seen.
const AW_LIMIT = 5

async function timedQuery(node) {
  const r = await call(node.url, 'GET', `/allocation_candidates?${AW_QUERY}&limit=${AW_LIMIT}`)
  const ms = r.ms
  if (r.status !== 200) throw new Error(`GET candidates on ${node.name}: ${r.status} ${r.text.slice(0, 300)}`)
  return {ms, json: r.json}
}

/** `rounds` rounds (30): a write on node A through the API, the first limited query on node B. */
export async function afterWriteAcrossNodes(nodes, rounds) {
  const list = await must(nodes[0].url, 'GET', `/allocation_candidates?${AW_QUERY}&limit=${AW_LIMIT}`)
  const uuids = Object.keys(list.provider_summaries)
  if (!uuids.length) throw new Error('the after-write query has no candidates')
  const times = []
  let stale = 0
  let checked = 0
  for (let r = 0; r < rounds; r++) {
    const a = nodes[r % nodes.length]
    const b = nodes[(r + 1) % nodes.length]
    const u = uuids[r % uuids.length]
    const w = await prepareWrite(a.url, u, r)
    const p = `/resource_providers/${u}/${w.kind === 'inventory' ? 'inventories' : w.kind}`
    const body =
      w.kind === 'inventory'
        ? {resource_provider_generation: w.generation, inventories: w.inventories}
        : w.kind === 'traits'
          ? {resource_provider_generation: w.generation, traits: w.traits}
          : {resource_provider_generation: w.generation, aggregates: w.aggregates}
    await must(a.url, 'PUT', p, body)
    const q = await timedQuery(b)
    times.push(q.ms)
    const shown = showsWrite(q.json, u, w)
    if (shown !== null) {
      checked++
      if (!shown) {
        stale++
        progress(`  stale: ${b.name} answered without the ${w.kind} write ${a.name} had just acknowledged on ${u}`)
      }
    }
  }
  return {p50: pct(times, 50), p99: pct(times, 99), rounds, checked, stale, ...(await queryAlone(nodes[1], rounds))}
}

/** The same query, repeated with nothing written before it: the part of the above not spent catching up. */
async function queryAlone(node, rounds) {
  const times = []
  for (let r = 0; r < rounds; r++) times.push((await timedQuery(node)).ms)
  return {alone_p50: pct(times, 50)}
}

/** `rounds` rounds (30): a write by `placemat ... --db FILE` (the CLI at `bin`, its own process), then the daemon's first limited query. */
export async function afterWriteByCli(node, dbFile, {rounds, bin}) {
  const list = await must(node.url, 'GET', `/allocation_candidates?${AW_QUERY}&limit=${AW_LIMIT}`)
  const uuids = Object.keys(list.provider_summaries)
  if (!uuids.length) throw new Error('the after-write query has no candidates')
  const times = []
  const cliTimes = []
  let stale = 0
  let checked = 0
  for (let r = 0; r < rounds; r++) {
    const u = uuids[r % uuids.length]
    const w = await prepareWrite(node.url, u, r)
    const args =
      w.kind === 'inventory'
        ? ['inventory', 'set', u, `VCPU:reserved=${w.reserved}`, '--amend']
        : w.kind === 'traits'
          ? ['provider', 'trait', 'set', u, ...w.traits]
          : ['aggregate', 'set', u, ...w.aggregates]
    const t0 = performance.now()
    try {
      execFileSync(process.execPath, [bin, ...args, '--db', dbFile, '--json'], {
        stdio: 'pipe',
        timeout: 300000,
        env: {...process.env, PLACEMAT_HOME: path.dirname(dbFile)},
      })
    } catch (err) {
      throw new Error(
        `placemat ${args.join(' ')} --db ${dbFile} failed (${err.status ?? err.signal}): ${String(err.stderr ?? err.message)
          .trim()
          .slice(-600)}`,
      )
    }
    cliTimes.push(performance.now() - t0)
    const q = await timedQuery(node)
    times.push(q.ms)
    const shown = showsWrite(q.json, u, w)
    if (shown !== null) {
      checked++
      if (!shown) {
        stale++
        progress(`  stale: the daemon answered without the ${w.kind} write the CLI had just made on ${u}`)
      }
    }
  }
  return {
    p50: pct(times, 50),
    p99: pct(times, 99),
    rounds,
    checked,
    stale,
    cli_write_p50_ms: pct(cliTimes, 50),
    ...(await queryAlone(node, rounds)),
  }
}
