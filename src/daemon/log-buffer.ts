/**
 * Where the daemon's log lines go: stdout, in batches. pino's own destination hands each line to
 * a thread of Node's pool and wakes the event loop again when it is written, two hops per
 * request; here the access lines of a busy moment go out in one write, at most FLUSH_MS late.
 * Lines at warn or worse, and whatever is pending with them, are written at once.
 */

/** How long an access line may wait for others. */
const FLUSH_MS = 100
/** Pending text that is written without waiting. */
const FLUSH_BYTES = 16 * 1024

export interface LogSink {
  write(text: string): unknown
}

export class LogBuffer {
  private pending = ''
  private timer: NodeJS.Timeout | null = null

  /** `sink` is process.stdout by default: synchronous on Linux for files, pipes and terminals. */
  constructor(private readonly sink: LogSink = process.stdout) {}

  /** One serialized line from pino (`{"level":30,...}\n`). */
  write(line: string): void {
    this.pending += line
    if (this.pending.length >= FLUSH_BYTES || !routine(line)) this.flush()
    else if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), FLUSH_MS)
      this.timer.unref()
    }
  }

  /** Writes what is pending; the daemon calls it before it exits. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    if (!this.pending) return
    const text = this.pending
    this.pending = ''
    this.sink.write(text)
  }
}

/** Lines at trace, debug or info (pino levels 10, 20, 30) may wait; warn and worse may not. */
function routine(line: string): boolean {
  const digit = line.charCodeAt(9)
  return line.startsWith('{"level":') && digit >= 0x31 && digit <= 0x33 && line.charCodeAt(10) === 0x30 && line.charCodeAt(11) === 0x2c
}
