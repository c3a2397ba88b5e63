// The fixed-load passes' table, and where K nodes' extra CPU per claim goes.
import {fmtFixed as x, fmtMs} from '../lib/stats.mjs'
import {printTable} from '../lib/table.mjs'
import {KEEP_UP_READ, kinds} from './fixed-load.mjs'

/**
 * For each database the run was on (one table when it was on one), the passes but the reads alone
 * as a Markdown table, then where the difference goes.
 */
export function printFixedLoad(rows, log = console.log) {
  const databases = [...new Set(rows.map((r) => r.database ?? ''))]
  for (const database of databases) {
    if (databases.length > 1) log(`\n**Fixed load on ${database}**\n`)
    printDatabase(
      rows.filter((r) => (r.database ?? '') === database),
      log,
    )
  }
}

function printDatabase(rows, log) {
  const claimRows = rows.filter((r) => r.pass !== 'reads alone')
  if (!claimRows.length) return
  const one = claimRows.find((r) => r.nodes === 1 && r.pass === 'round-robin')
  const header = [
    'nodes',
    'load',
    'offered/s',
    'achieved/s',
    'not kept up',
    'daemon CPU ms/claim',
    'per node',
    'DB CPU ms/claim',
    'ratio to 1 node',
    'ratio to node A alone',
    'round trips/claim',
    'retried/claim',
    '5xx by kind',
    'images applied/claim/node',
    'claim p50 ms',
  ]
  const cells = claimRows.map((r) => [
    r.of && r.of !== r.nodes ? `${r.nodes} of ${r.of}` : r.nodes,
    r.pass,
    r.offered_per_s,
    r.achieved_per_s.toFixed(1),
    r.not_kept_up,
    fmtMs(r.daemon_cpu_ms),
    r.node_cpu_ms.map(fmtMs).join(' + '),
    fmtMs(r.database_cpu_ms),
    one ? `${x(r.daemon_cpu_ms / one.daemon_cpu_ms)}x` : '—',
    r.nodes > 1 && aloneMs(rows, r.nodes) ? `${x(r.daemon_cpu_ms / aloneMs(rows, r.nodes))}x` : '—',
    x(r.round_trips_per_claim),
    x(r.retried_per_claim, 3),
    kinds(r.errors_by_kind),
    x(r.image_catchups_per_claim_per_node),
    fmtMs(r.claim_p50_ms),
  ])
  printTable(header, cells, log)
  if (claimRows.some((r) => r.pass === 'pinned')) {
    log('')
    log(
      `pinned: every request of a claim to node A; each other node gets one GET ${KEEP_UP_READ} a claim, whose CPU, round trips and catch-ups are in that row.`,
    )
  }
  for (const line of decomposition(rows)) log(line)
}

/** Node A's passes serving alone in the K-node run, before and after the K-node passes. */
const aloneRows = (rows, k) => rows.filter((r) => r.of === k && r.nodes === 1 && r.pass.startsWith('node A alone'))

/** Node A's CPU per claim serving alone in the K-node run: the mean of its passes. */
function aloneMs(rows, k) {
  const alone = aloneRows(rows, k)
  return alone.length ? alone.reduce((a, r) => a + r.daemon_cpu_ms, 0) / alone.length : null
}

/** Where K nodes' extra CPU per claim goes, from the round-robin, pinned and reads-alone passes. */
export function decomposition(rows) {
  const one = rows.find((r) => r.nodes === 1 && r.pass === 'round-robin')
  const lines = []
  for (const k of [...new Set(rows.map((r) => r.nodes))].filter((n) => n > 1)) {
    const rr = rows.find((r) => r.nodes === k && r.pass === 'round-robin')
    const pin = rows.find((r) => r.nodes === k && r.pass === 'pinned')
    const byClaim = rows.find((r) => r.nodes === k && r.pass === 'round-robin by claim')
    const reads = rows.find((r) => r.nodes === k && r.pass === 'reads alone')
    if (!rr || !pin || !reads) continue
    const writer = pin.node_cpu_ms[0]
    const followers = pin.node_cpu_ms.slice(1).reduce((a, b) => a + b, 0)
    // Each follower got one keep-up read per claim: what a read costs with nothing to apply is taken off.
    const readsPerClaimPerFollower = pin.keep_up_reads / pin.claims / (k - 1)
    const readCost = reads.daemon_cpu_ms * readsPerClaimPerFollower * (k - 1)
    const applying = followers - readCost
    const interleaving = rr.daemon_cpu_ms - writer - applying
    lines.push('')
    lines.push(
      `**${k} nodes against 1, daemon CPU per claim at ${rr.offered_per_s}/s offered:** ${fmtMs(rr.daemon_cpu_ms)} ms round-robin` +
        (one
          ? ` against ${fmtMs(one.daemon_cpu_ms)} ms on one node (${x(rr.daemon_cpu_ms / one.daemon_cpu_ms)}x, +${fmtMs(rr.daemon_cpu_ms - one.daemon_cpu_ms)} ms), in the kernel ${fmtMs(rr.daemon_sys_ms)} against ${fmtMs(one.daemon_sys_ms)} ms; ` +
            `the database ${fmtMs(rr.database_cpu_ms)} against ${fmtMs(one.database_cpu_ms)} ms; the daemons' system calls per claim: ${x(rr.write_syscalls, 1)} against ${x(one.write_syscalls, 1)} writes, ${x(rr.read_syscalls, 1)} against ${x(one.read_syscalls, 1)} reads`
          : ''),
    )
    const alone = aloneMs(rows, k)
    if (alone) {
      const ratios = [`${x(rr.daemon_cpu_ms / alone)}x round-robin`, ...(byClaim ? [`${x(byClaim.daemon_cpu_ms / alone)}x by claim`] : [])]
      lines.push(
        `- against node A alone in the same run (the mean of its passes before and after, ${aloneRows(rows, k)
          .map((r) => fmtMs(r.daemon_cpu_ms))
          .join(' and ')} ms): ${ratios.join(', ')}`,
      )
    }
    lines.push(
      `- applying the others' changes: ${fmtMs(applying)} ms/claim (${fmtMs(applying / (k - 1))} a follower; pinned pass, the followers' ${fmtMs(followers)} ms less their keep-up reads' own ${fmtMs(readCost)} ms); ` +
        `per claim per follower ${x(pin.changes_applied_per_claim_per_node)} changes applied, catch-ups from images ${x(pin.image_catchups_per_claim_per_node)}, from rows ${x(pin.row_catchups_per_claim_per_node, 3)}`,
    )
    lines.push(
      `- the writer being one of ${k}: node A ${fmtMs(writer)} ms/claim pinned` +
        (one
          ? ` against ${fmtMs(one.daemon_cpu_ms)} alone: ${writer >= one.daemon_cpu_ms ? '+' : ''}${fmtMs(writer - one.daemon_cpu_ms)} ms`
          : ''),
    )
    lines.push(
      `- interleaving (round-robin less writer less applying): ${fmtMs(interleaving)} ms/claim; round trips/claim ${x(rr.round_trips_per_claim)} round-robin, ${x(pin.round_trips_per_claim)} pinned` +
        (one ? `, ${x(one.round_trips_per_claim)} one node` : '') +
        `; writes retried/claim ${x(rr.retried_per_claim, 3)} against ${x(pin.retried_per_claim, 3)} pinned; catch-ups/claim/node from images ${x(rr.image_catchups_per_claim_per_node)} against ${x(pin.image_catchups_per_claim_per_node)} pinned, from rows ${x(rr.row_catchups_per_claim_per_node, 3)}; changes applied/claim/node ${x(rr.changes_applied_per_claim_per_node)}`,
    )
    if (byClaim) {
      lines.push(
        `- of which sending each request of a claim to another node: round-robin by claim costs ${fmtMs(byClaim.daemon_cpu_ms)} ms/claim, ${fmtMs(rr.daemon_cpu_ms - byClaim.daemon_cpu_ms)} less than by request ` +
          `(round trips/claim ${x(byClaim.round_trips_per_claim)}, retried/claim ${x(byClaim.retried_per_claim, 3)}, catch-ups/claim/node from images ${x(byClaim.image_catchups_per_claim_per_node)})`,
      )
    }
  }
  return lines
}
