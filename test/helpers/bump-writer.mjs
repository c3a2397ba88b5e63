// A separate process writing to the same database file: bumps one provider's generation N times,
// each time checking it saw the previous value (a lost update would show as a repeated generation).
import {Store} from '../../dist/src/store/store.js'

const [file, uuid, count] = process.argv.slice(2)
const store = await Store.open(file)
const seen = []
for (let i = 0; i < Number(count); i++) {
  const gen = await store.write((s, now) => {
    const p = s.providers.get(uuid)
    s.bumpProvider(p, now)
    return p.generation
  })
  seen.push(gen)
}
await store.close()
process.stdout.write(JSON.stringify(seen))
