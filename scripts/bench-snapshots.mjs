// Snapshots of a cloud: `placemat export` and `placemat import` of the same cloud, side by side, as
// an operator runs them (the built command line on a --db file): scripts/gen-apply-fixture.mjs's
// N providers applied once, then each exported as JSON and YAML and imported into a new file.
//
//   npm run bench -- --snapshots [--providers 10000] [--rounds 3]
//
// Each line: wall time of the whole command (start-up included), min and p50 over the rounds.
import {execFileSync} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {performance} from 'node:perf_hooks'
import {fileURLToPath} from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const argv = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`)
  return i >= 0 ? Number(argv[i + 1]) : dflt
}
const PROVIDERS = opt('providers', 10000)
const ROUNDS = opt('rounds', 3)
const bin = path.join(root, 'bin', 'run.js')
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-bench-snapshots-'))
const run = (...args) => execFileSync(process.execPath, [bin, ...args], {stdio: ['ignore', 'ignore', 'inherit']})
const ms = (x) => x.toFixed(0).padStart(6)

try {
  const file = path.join(dir, 'cloud.json')
  const generated = execFileSync(process.execPath, [path.join(root, 'scripts', 'gen-apply-fixture.mjs'), String(PROVIDERS), '--json'], {
    maxBuffer: 1 << 30,
  })
  fs.writeFileSync(file, generated)
  const db = path.join(dir, 'cloud.db')
  run('db', 'init', '--db', db)
  run('apply', file, '--db', db, '--summary')
  console.log(`snapshots: ${PROVIDERS} providers, ${ROUNDS} rounds, the command line on a --db file`)
  for (const format of ['json', 'yaml']) {
    const snap = path.join(dir, `snap.${format}`)
    const times = {export: [], import: []}
    for (let r = 0; r < ROUNDS; r++) {
      let t0 = performance.now()
      run('export', '--db', db, ...(format === 'json' ? ['--json'] : []), '-o', snap)
      times.export.push(performance.now() - t0)
      const target = path.join(dir, `import-${format}-${r}.db`)
      run('db', 'init', '--db', target)
      t0 = performance.now()
      run('import', snap, '--db', target)
      times.import.push(performance.now() - t0)
    }
    for (const [what, xs] of Object.entries(times)) {
      const sorted = [...xs].sort((a, b) => a - b)
      console.log(`  ${what.padEnd(6)} ${format}   wall min ${ms(sorted[0])} p50 ${ms(sorted[Math.floor(sorted.length / 2)])} ms`)
    }
  }
} finally {
  fs.rmSync(dir, {recursive: true, force: true})
}
