// The checks after a fault, with no load running: the ledger against the truth (SQL on
// PostgreSQL, else a daemon), usage beyond capacity on every daemon and in SQL, and the usages
// each daemon gives of the providers the load touched against the SQL sums.
import {sql} from '../lib/postgres.mjs'
import {alive, waitHealthy} from './daemons.mjs'
import {health, http, mapLimit} from './http.mjs'
import {sleep} from './live.mjs'

/** Whether each consumer has allocations, on a daemon: Map consumer -> true/false, or an error string. */
async function presenceOnDaemon(d, consumers) {
  const out = new Map()
  await mapLimit(consumers, 6, async (u) => {
    const r = await http(d, 'GET', `/allocations/${u}`, undefined, 30000)
    out.set(u, r.status === 200 ? Object.keys(r.json?.allocations ?? {}).length > 0 : `${r.status || r.kind}`)
  })
  return out
}

async function presenceInSql(env, consumers) {
  const r = await sql(env.sqlPort(), env.dbName, 'select distinct consumer_uuid from allocations where consumer_uuid = any($1::text[])', [
    consumers,
  ])
  const found = new Set(r.rows.map((x) => x.consumer_uuid))
  return new Map(consumers.map((u) => [u, found.has(u)]))
}

/**
 * The ledger against the truth (SQL on PostgreSQL, else the daemon): writes lost, unacknowledged
 * writes that happened anyway, and daemons whose answers disagree with the database.
 */
export async function verifyLedger(env, phase, {all = false, truthDaemon = null} = {}) {
  const entries = [...env.ledger.values()].filter((e) => all || e.lastPhase === phase.id || (e.acked && !e.deleteAcked))
  const consumers = entries.map((e) => e.consumer)
  const out = {
    checked: consumers.length,
    acked: 0,
    deletesAcked: 0,
    lost: 0,
    lostSamples: [],
    committedDespite503: 0,
    committedAfterUnsure503: 0,
    committedAfterNetworkError: 0,
    goneAfterFailedDelete: 0,
    goneAfter503Delete: 0,
    stale: {},
    staleSamples: [],
    unreadable: {},
    truth: null,
  }
  if (!consumers.length) return out
  const daemons = env.rotation.filter(alive)
  const onDaemon = new Map()
  for (const d of daemons) onDaemon.set(d.name, await presenceOnDaemon(d, consumers))
  let truth
  if (env.kind === 'postgres') {
    truth = await presenceInSql(env, consumers)
    out.truth = 'sql'
  } else {
    const d = truthDaemon ?? daemons[0]
    truth = onDaemon.get(d.name) ?? (await presenceOnDaemon(d, consumers))
    out.truth = `daemon ${d.name}`
  }
  for (const e of entries) {
    const present = truth.get(e.consumer)
    if (typeof present !== 'boolean') {
      out.unreadable[present] = (out.unreadable[present] ?? 0) + 1
      continue
    }
    if (e.acked) out.acked++
    if (e.deleteAcked) out.deletesAcked++
    let lost = null
    if (e.acked && e.deleteAcked && present) lost = 'delete acknowledged, consumer still present'
    else if (e.acked && !e.deleteAcked && !present) {
      if (e.deleteFails.length) {
        out.goneAfterFailedDelete++
        if (e.deleteFails.every((f) => f.s === 503)) out.goneAfter503Delete++
      } else lost = 'claim acknowledged, absent'
    } else if (!e.acked && present) {
      if (e.putFails.some((f) => f.s === 503 && !f.unsure)) out.committedDespite503++
      else if (e.putFails.some((f) => f.s === 503)) out.committedAfterUnsure503++
      else out.committedAfterNetworkError++
    }
    if (lost) {
      out.lost++
      if (out.lostSamples.length < 10)
        out.lostSamples.push({
          consumer: e.consumer,
          why: lost,
          ackPhase: e.ackPhase,
          ackDaemon: e.ackDaemon,
          deletePhase: e.deletePhase,
          delete404: e.delete404,
        })
    }
    for (const [name, m] of onDaemon) {
      const v = m.get(e.consumer)
      if (typeof v !== 'boolean') out.unreadable[`${name} ${v}`] = (out.unreadable[`${name} ${v}`] ?? 0) + 1
      else if (v !== present) {
        out.stale[name] = (out.stale[name] ?? 0) + 1
        if (out.staleSamples.length < 10) out.staleSamples.push({daemon: name, consumer: e.consumer, daemonSays: v, truthSays: present})
      }
    }
  }
  return out
}

/** Usage beyond capacity, per daemon (its API, every provider) and in SQL. */
export async function checkOvercommit(env, {providers = null} = {}) {
  const out = {daemons: {}, sql: null, samples: [], unreadable: 0}
  for (const d of env.rotation.filter(alive)) {
    let uuids = providers
    if (!uuids) {
      const list = await http(d, 'GET', '/resource_providers', undefined, 60000)
      if (list.status !== 200) {
        out.daemons[d.name] = `unreadable (${list.status || list.kind})`
        continue
      }
      uuids = list.json.resource_providers.map((p) => p.uuid)
    }
    let bad = 0
    await mapLimit(uuids, 6, async (u) => {
      const [inv, use] = await Promise.all([
        http(d, 'GET', `/resource_providers/${u}/inventories`, undefined, 30000),
        http(d, 'GET', `/resource_providers/${u}/usages`, undefined, 30000),
      ])
      if (inv.status !== 200 || use.status !== 200) {
        out.unreadable++
        return
      }
      for (const [rc, i] of Object.entries(inv.json.inventories)) {
        const used = use.json.usages[rc] ?? 0
        if (used > (i.total - i.reserved) * i.allocation_ratio) {
          bad++
          if (out.samples.length < 10)
            out.samples.push({daemon: d.name, provider: u, rc, used, total: i.total, reserved: i.reserved, ratio: i.allocation_ratio})
        }
      }
    })
    out.daemons[d.name] = bad
  }
  if (env.kind === 'postgres') {
    const r = await sql(
      env.sqlPort(),
      env.dbName,
      `select i.provider_uuid, i.resource_class, i.total, i.reserved, i.allocation_ratio, coalesce(sum(a.used), 0)::bigint as used
         from inventories i left join allocations a on a.provider_uuid = i.provider_uuid and a.resource_class = i.resource_class
        group by 1, 2, 3, 4, 5
       having coalesce(sum(a.used), 0) > (i.total - i.reserved) * i.allocation_ratio`,
    )
    out.sql = r.rowCount
    for (const row of r.rows.slice(0, 10)) out.samples.push({sql: true, ...row})
  }
  out.count = Math.max(0, ...Object.values(out.daemons).filter((v) => typeof v === 'number'), out.sql ?? 0)
  return out
}

/** Usages of the providers the ledger touched: each daemon's answer against the SQL sums. */
async function staleUsages(env, providers) {
  if (env.kind !== 'postgres' || !providers.length) return {checked: providers.length, mismatches: {}, samples: []}
  const r = await sql(
    env.sqlPort(),
    env.dbName,
    'select provider_uuid, resource_class, sum(used)::bigint as used from allocations where provider_uuid = any($1::text[]) group by 1, 2',
    [providers],
  )
  const truth = new Map()
  for (const row of r.rows) truth.set(`${row.provider_uuid} ${row.resource_class}`, Number(row.used))
  const out = {checked: providers.length, mismatches: {}, samples: []}
  for (const d of env.rotation.filter(alive)) {
    let n = 0
    await mapLimit(providers, 6, async (u) => {
      const use = await http(d, 'GET', `/resource_providers/${u}/usages`, undefined, 30000)
      if (use.status !== 200) return
      const classes = new Set([
        ...Object.keys(use.json.usages),
        ...[...truth.keys()].filter((k) => k.startsWith(u + ' ')).map((k) => k.split(' ')[1]),
      ])
      for (const rc of classes) {
        const api = use.json.usages[rc] ?? 0
        const db = truth.get(`${u} ${rc}`) ?? 0
        if (api !== db) {
          n++
          if (out.samples.length < 10) out.samples.push({daemon: d.name, provider: u, rc, daemonSays: api, databaseSays: db})
        }
      }
    })
    out.mismatches[d.name] = n
  }
  return out
}

export async function checks(env, phase, _result) {
  // Settle: the daemons follow each other's last commits (an idle one reads the journal each second).
  await sleep(2000)
  try {
    await waitHealthy(env.rotation.filter(alive), 30000)
  } catch (err) {
    phase.notes.push(`before the checks: ${err.message}`)
  }
  const out = {}
  if (env.kind === 'postgres' && env.rotation.some(alive)) {
    const r = await sql(env.sqlPort(), env.dbName, "select value from placemat_meta where key = 'change_counter'")
    out.journal = {database: Number(r.rows[0]?.value)}
    for (const d of env.rotation.filter(alive)) out.journal[d.name] = (await health(d)).json?.journal?.position ?? null
    const behind = env.rotation.filter(alive).filter((d) => out.journal[d.name] !== out.journal.database)
    if (behind.length)
      phase.notes.push(
        `STALE journal: the database's change counter is ${out.journal.database}, ${behind.map((d) => `${d.name} is at ${out.journal[d.name]}`).join(', ')} (2 s after the load stopped)`,
      )
  }
  out.ledger = phase.ledgerCheck ?? (await verifyLedger(env, phase))
  const touched = [
    ...new Set([...env.ledger.values()].filter((e) => e.lastPhase === phase.id || (e.acked && !e.deleteAcked)).flatMap((e) => e.providers)),
  ]
  out.overcommit = phase.overcommitCheck ?? (await checkOvercommit(env))
  out.usages = await staleUsages(env, touched)
  return out
}
