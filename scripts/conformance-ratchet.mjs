#!/usr/bin/env node
// Fails when fewer conformance tests pass than the floor recorded in the repo (overall and per file).
// Raise the floor as more pass: node scripts/conformance-ratchet.mjs RESULTS.json FLOOR.json --raise
import fs from 'node:fs'

const [resultsFile, floorFile, ...rest] = process.argv.slice(2)
const results = JSON.parse(fs.readFileSync(resultsFile, 'utf8'))
const floor = fs.existsSync(floorFile) ? JSON.parse(fs.readFileSync(floorFile, 'utf8')) : {total: 0, files: {}}
const files = Object.fromEntries(results.files.map((f) => [f.file, f.passed]))
const total = results.totals.passed

if (rest.includes('--raise')) {
  const next = {total: Math.max(total, floor.total), files: {...floor.files}}
  for (const [f, n] of Object.entries(files)) next.files[f] = Math.max(n, floor.files[f] ?? 0)
  fs.writeFileSync(floorFile, JSON.stringify(next, null, 2) + '\n')
  console.log(`floor raised to ${next.total} passing tests`)
  process.exit(0)
}

const drops = Object.entries(floor.files)
  .filter(([f, n]) => (files[f] ?? 0) < n)
  .map(([f, n]) => `${f}: ${files[f] ?? 0} < ${n}`)
console.log(`conformance: ${total} passed of ${results.totals.tests} (floor ${floor.total})`)
if (total < floor.total || drops.length) {
  for (const d of drops) console.log(`  regressed ${d}`)
  // Say why each regressed file fell: its server's error or its first failure, cut short.
  for (const f of results.files.filter((r) => (floor.files[r.file] ?? 0) > r.passed)) {
    const why = f.server_error ?? f.failures?.[0]?.message
    if (why) console.log(`  ${f.file}: ${String(why).slice(0, 800).replaceAll('\n', '\n    ')}`)
  }
  console.log('conformance ratchet: FAILED')
  process.exit(1)
}
console.log('conformance ratchet: ok')
