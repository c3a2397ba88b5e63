// What one commit's sync costs on this file system by how many WAL frames it writes: each round
// writes `frames` frames (4 KiB page + 24-byte header, as SQLite's WAL does) into a file already as
// large as the writes (in place, as a WAL started again from its beginning is written), then
// fdatasyncs it. The two floors differ here too: the shared floor commits some 4 frames a claim,
// placemat some 8 to 18 (npm run bench -- --claim-profile).
import fs from 'node:fs'
import path from 'node:path'
import {pct} from './stats.mjs'

const FRAME = 4096 + 24

/** {frames: p50 ms of an fdatasync after writing that many frames in place}, rounds taken in turn. */
export function syncCostByFrames(dir, frameCounts = [4, 8, 12, 18], rounds = 400) {
  const file = path.join(dir, 'sync-cost.bin')
  const span = 16 << 20
  const fd = fs.openSync(file, 'w+')
  try {
    fs.writeSync(fd, Buffer.alloc(span))
    fs.fsyncSync(fd)
    const times = Object.fromEntries(frameCounts.map((f) => [f, []]))
    const buffers = Object.fromEntries(frameCounts.map((f) => [f, Buffer.alloc(f * FRAME, 7)]))
    let at = 0
    for (let r = 0; r < rounds; r++) {
      for (const f of frameCounts) {
        const buf = buffers[f]
        if (at + buf.length > span) at = 0
        fs.writeSync(fd, buf, 0, buf.length, at)
        at += buf.length
        const t0 = performance.now()
        fs.fdatasyncSync(fd)
        times[f].push(performance.now() - t0)
      }
    }
    return Object.fromEntries(frameCounts.map((f) => [f, pct(times[f], 50)]))
  } finally {
    fs.closeSync(fd)
    fs.rmSync(file, {force: true})
  }
}
