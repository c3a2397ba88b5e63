// Drops optional dependencies that have no entry in package-lock.json (platform packages the
// registry does not serve), so that `npm ci` accepts the lock. Run after changing dependencies.
import fs from 'node:fs'
const file = process.argv[2]
const lock = JSON.parse(fs.readFileSync(file, 'utf8'))
let pruned = 0
for (const [key, entry] of Object.entries(lock.packages)) {
  if (!entry.optionalDependencies) continue
  for (const name of Object.keys(entry.optionalDependencies)) {
    // resolvable if node_modules/<name> exists at this level or any ancestor
    let base = key,
      found = false
    while (true) {
      const cand = (base ? base + '/' : '') + 'node_modules/' + name
      if (lock.packages[cand]) {
        found = true
        break
      }
      const i = base.lastIndexOf('/node_modules/')
      if (base === '') break
      base = i >= 0 ? base.slice(0, i) : ''
    }
    if (!found) {
      delete entry.optionalDependencies[name]
      pruned++
    }
  }
  if (Object.keys(entry.optionalDependencies).length === 0) delete entry.optionalDependencies
}
fs.writeFileSync(file, JSON.stringify(lock, null, 2) + '\n')
console.log('pruned', pruned)
