// The overcommit check after the churn, and the release of every claim it left, so that the next
// configuration starts from an empty cloud.
import {call, must} from './http.mjs'

/**
 * After the churn: looks up the consumers whose outcome was unclear, checks usage against
 * capacity (and against the claims still held) on every provider touched, then releases all.
 */
export async function checkAndRelease(nodes, run) {
  const {touched, uncertain, held} = run
  const ask = (i) => nodes[i % nodes.length]
  let resolved = 0
  for (const consumer of uncertain) {
    const a = await must(ask(0).url, 'GET', `/allocations/${consumer}`)
    const allocations = a?.allocations ?? {}
    if (Object.keys(allocations).length) {
      held.push({consumer, allocations})
      resolved++
    }
  }
  const expected = new Map()
  for (const {allocations} of held) {
    for (const [rp, {resources}] of Object.entries(allocations)) {
      const e = expected.get(rp) ?? {}
      for (const [rc, n] of Object.entries(resources)) e[rc] = (e[rc] ?? 0) + n
      expected.set(rp, e)
    }
  }
  const providers = [...touched.keys()]
  let overcommit = 0
  let mismatches = 0
  let otherNode = 0
  const samples = []
  let next = 0
  const worker = async () => {
    while (next < providers.length) {
      const i = next++
      const rp = providers[i]
      const lastWriter = touched.get(rp)
      // Half of them from a node other than the one that served the last write touching it.
      let n = i % nodes.length
      if (i % 2 === 0 && nodes.length > 1 && n === lastWriter) n = (n + 1) % nodes.length
      if (n !== lastWriter) otherNode++
      const node = ask(n)
      const [u, inv] = await Promise.all([
        must(node.url, 'GET', `/resource_providers/${rp}/usages`),
        must(node.url, 'GET', `/resource_providers/${rp}/inventories`),
      ])
      const want = expected.get(rp) ?? {}
      for (const rc of new Set([...Object.keys(u.usages), ...Object.keys(want)])) {
        const used = u.usages[rc] ?? 0
        const i2 = inv.inventories[rc]
        const cap = i2 ? (i2.total - i2.reserved) * i2.allocation_ratio : 0
        if (used > cap + 1e-9) {
          overcommit++
          if (samples.length < 5) samples.push(`${rp} ${rc}: used ${used} > capacity ${cap} (${node.name})`)
        }
        if (used !== (want[rc] ?? 0)) {
          mismatches++
          if (samples.length < 5) samples.push(`${rp} ${rc}: used ${used}, the claims held add up to ${want[rc] ?? 0} (${node.name})`)
        }
      }
    }
  }
  await Promise.all(Array.from({length: 4}, worker))
  // Release everything still held, so the next configuration starts from an empty cloud.
  let releaseErrors = 0
  let k = 0
  const releaser = async () => {
    while (held.length) {
      const {consumer} = held.pop()
      const node = ask(k++)
      try {
        const r = await call(node.url, 'DELETE', `/allocations/${consumer}`)
        if (r.status !== 204 && r.status !== 404) releaseErrors++
      } catch {
        releaseErrors++
      }
    }
  }
  await Promise.all(Array.from({length: 4}, releaser))
  return {providers: providers.length, overcommit, mismatches, otherNode, resolved, releaseErrors, samples}
}
