// CPU profiles (bench-scaleout --fixed-load R --cpu-prof DIR): self time per claim by function
// within each pass's window, each node's samples scaled to its CPU per claim (/proc).
import fs from 'node:fs'
import {SourceMap} from 'node:module'
import path from 'node:path'

const sourceMaps = new Map()
/** Where a function of the bundle (dist/cli) was written: its source file and line, through the bundle's source map. */
function origin(cf, root) {
  const file = cf.url.startsWith('file://') ? cf.url.slice(7) : null
  if (!file?.startsWith(root)) return null
  if (!sourceMaps.has(file)) {
    let map = null
    try {
      map = new SourceMap(JSON.parse(fs.readFileSync(`${file}.map`, 'utf8')))
    } catch {}
    sourceMaps.set(file, map)
  }
  const e = sourceMaps.get(file)?.findEntry(cf.lineNumber, cf.columnNumber)
  if (!e?.originalSource) return null
  return `${path.relative(root, path.resolve(path.dirname(file), e.originalSource))}:${e.originalLine + 1}`
}

/** Self microseconds by function in `profile`'s samples between `from` and `to` (µs, the monotonic clock). */
export function selfTimes(profile, [from, to], root) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const out = new Map()
  let t = profile.startTime
  const {samples, timeDeltas} = profile
  for (let i = 0; i < samples.length; i++) {
    t += timeDeltas[i]
    // A sample stands for the time until the next one.
    const dur = i + 1 < timeDeltas.length ? timeDeltas[i + 1] : 0
    if (t < from || t > to || dur <= 0) continue
    const cf = byId.get(samples[i]).callFrame
    if (cf.functionName === '(idle)') continue
    const url =
      origin(cf, root) ?? `${cf.url.replace(`file://${root}/`, '').replace(/^file:\/\/.*\/node_modules\//, '')}:${cf.lineNumber + 1}`
    const key = cf.url ? `${cf.functionName || '(anonymous)'} ${url}` : cf.functionName
    out.set(key, (out.get(key) ?? 0) + dur)
  }
  return out
}

/** The profile file each pid wrote in `dir` (the main thread's). */
function profileOf(dir, pid) {
  const file = fs.readdirSync(dir).find((f) => new RegExp(`\\.${pid}\\.0\\.\\d+\\.cpuprofile$`).test(f))
  return file ? JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) : null
}

const add = (into, from, scale = 1) => {
  for (const [k, v] of from) into.set(k, (into.get(k) ?? 0) + v * scale)
  return into
}

/**
 * Per pass, self ms per claim by function: all nodes together, the writer (node A) and the
 * followers when pinned. Called once the daemons have exited (their profiles written).
 */
export function passProfiles(dir, passRows, root) {
  const out = []
  for (const r of passRows) {
    if (!(r.pass === 'reads alone' ? r.keep_up_reads : r.claims)) continue
    const maps = r.pids.map((pid) => {
      const p = profileOf(dir, pid)
      return p ? selfTimes(p, r.window_us, root) : null
    })
    if (maps.some((m) => m === null)) continue
    // V8 samples by the clock, not by CPU: a process that waits for a core is counted where it
    // stopped, mostly just after a socket write woke the other end (writeBuffer, writev). So each
    // node's samples in JavaScript and V8 are scaled to its user CPU per claim (/proc), and the
    // kernel's part is its system CPU, in place of the socket writes' samples.
    const scaled = maps.map((m, i) => {
      const user = new Map([...m].filter(([k]) => kindOf(k) !== 'socket writes'))
      return add(new Map([[KERNEL, r.node_sys_ms[i]]]), user, r.node_user_ms[i] / total(user))
    })
    const group = (ms) => ms.reduce((a, m) => add(a, m), new Map())
    const parts = {all: group(scaled)}
    if (r.pass === 'pinned') {
      parts.writer = scaled[0]
      parts.followers = group(scaled.slice(1))
    }
    if (r.pass === 'reads alone') {
      delete parts.all
      parts['followers, per read'] = group(scaled.slice(1))
    }
    out.push({nodes: r.nodes, pass: r.pass, parts})
  }
  return out
}

const KERNEL = '(kernel: system calls, /proc stime)'

/** What a function is part of: the socket writes (system calls), the collector, a layer of placemat, a library, Node. */
function kindOf(key) {
  if (/^(writeBuffer|writev|writeLatin1String|writeUtf8String|writeAsciiString)\b/.test(key)) return 'socket writes'
  if (key.startsWith('(')) return key
  const where = key.slice(key.lastIndexOf(' ') + 1)
  const m = /^src\/([a-z-]+)\//.exec(where) ?? /^(?:@[^/]+\/)?([^/:]+)\//.exec(where)
  if (/^node:/.test(where)) return 'node internals'
  return m ? (where.startsWith('src/') ? `src/${m[1]}` : m[1]) : 'other'
}
const byKind = (m) => {
  const out = new Map()
  for (const [k, v] of m) out.set(kindOf(k), (out.get(kindOf(k)) ?? 0) + v)
  return out
}

const top = (m, n) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n)
const total = (m) => [...m.values()].reduce((a, b) => a + b, 0)

export function printProfiles(profiles, log = console.log, n = 12) {
  if (!profiles.length) return
  log('')
  log("**CPU profiles: self time per claim (ms) by function within each pass, each node's samples scaled to its CPU per claim (/proc)**")
  for (const p of profiles) {
    for (const [part, m] of Object.entries(p.parts)) {
      log(
        `- ${p.nodes} node(s), ${p.pass}, ${part === 'all' ? 'all nodes' : part}: ${total(m).toFixed(2)} ms; ${top(m, n)
          .map(([k, v]) => `${k} ${v.toFixed(3)}`)
          .join('; ')}`,
      )
      log(
        `  by kind: ${top(byKind(m), 10)
          .map(([k, v]) => `${k} ${v.toFixed(2)}`)
          .join(', ')}`,
      )
    }
  }
  const one = profiles.find((p) => p.nodes === 1 && p.pass === 'round-robin')
  const grew = (from, to, what) => {
    const diff = add(new Map(to.parts.all), from.parts.all, -1)
    log(
      `- grew most ${what} (ms/claim): ${top(diff, n)
        .map(([k, v]) => `${k} +${v.toFixed(3)}`)
        .join('; ')}`,
    )
    log(
      `  by kind: ${top(byKind(diff), 10)
        .map(([k, v]) => `${k} ${v >= 0 ? '+' : ''}${v.toFixed(2)}`)
        .join(', ')}`,
    )
  }
  for (const p of profiles.filter((q) => q.nodes > 1 && q.pass === 'round-robin')) {
    if (one) grew(one, p, `from 1 node to ${p.nodes} round-robin`)
    const byClaim = profiles.find((q) => q.nodes === p.nodes && q.pass === 'round-robin by claim')
    if (byClaim) grew(byClaim, p, `from ${p.nodes} by claim to ${p.nodes} by request`)
  }
}
