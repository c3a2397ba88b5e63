/**
 * How smooth the page is, measured in the page and written on the root element for scripts and
 * tests: data-load-ms (from the navigation to the first map on the screen), data-draw-ms (the
 * last drawing, from its data to its frame on the screen), and the frames of the last burst of
 * drawing or use (from its first drawing or interaction to a second after its last):
 * data-frame-median, data-frame-p95 and data-frame-max in ms, data-frames how many were counted.
 */

const WATCH_MS = 1000

export class FrameWatch {
  private deltas: number[] = []
  private last = 0
  private until = 0
  private running = false
  private loaded = false

  constructor(private readonly root: HTMLElement) {}

  /** A drawing that began at `started` (performance.now()): its time to the screen, and the frames after it. */
  drawn(started: number): void {
    // Two frames: the first runs before the drawing's style and layout, the second after it was painted.
    requestAnimationFrame(() =>
      requestAnimationFrame(() => {
        const now = performance.now()
        this.root.dataset.drawMs = (now - started).toFixed(1)
        if (!this.loaded) {
          this.loaded = true
          this.root.dataset.loadMs = now.toFixed(1)
        }
        this.watch()
      }),
    )
  }

  /** Watches the frames for a second from now (an interaction, a drawing). */
  watch(): void {
    this.until = performance.now() + WATCH_MS
    if (this.running) return
    // A new burst: its frames alone.
    this.running = true
    this.deltas = []
    this.last = performance.now()
    const frame = (t: number) => {
      this.deltas.push(t - this.last)
      this.last = t
      if (t < this.until) requestAnimationFrame(frame)
      else {
        this.running = false
        this.write()
      }
    }
    requestAnimationFrame(frame)
  }

  private write(): void {
    const sorted = [...this.deltas].sort((a, b) => a - b)
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
    const d = this.root.dataset
    d.frames = String(sorted.length)
    d.frameMedian = at(0.5).toFixed(1)
    d.frameP95 = at(0.95).toFixed(1)
    d.frameMax = sorted[sorted.length - 1].toFixed(1)
  }
}
