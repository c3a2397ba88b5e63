// Where Debian's PostgreSQL server binaries are, for the scripts that start a throwaway cluster
// (bench-scaleout, fault-run): 15 (the release the anchor figures were taken on) when it is
// installed, else the newest; null when there is none.
import fs from 'node:fs'
import path from 'node:path'

const BASE = '/usr/lib/postgresql'

export function postgresBin() {
  if (fs.existsSync(path.join(BASE, '15', 'bin', 'initdb'))) return path.join(BASE, '15', 'bin')
  if (!fs.existsSync(BASE)) return null
  for (const v of fs.readdirSync(BASE).sort((a, b) => Number(b) - Number(a))) {
    if (fs.existsSync(path.join(BASE, v, 'bin', 'initdb'))) return path.join(BASE, v, 'bin')
  }
  return null
}
