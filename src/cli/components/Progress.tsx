/**
 * Terminal progress bar (ink) for long CLI operations such as `placemat apply`. Only
 * loaded when stdout is a terminal; elsewhere commands print plain text.
 */
import {Box, Text, render, type Instance} from 'ink'

export interface BarProps {
  /** 0..1 */
  ratio: number
  width?: number
  /** Color of the filled part. */
  color?: string
}

/** A horizontal bar: filled blocks for `ratio`, dim blocks for the rest. */
export function Bar({ratio, width = 30, color = 'green'}: BarProps) {
  const r = Number.isFinite(ratio) ? Math.max(0, Math.min(1, ratio)) : 0
  const filled = Math.round(r * width)
  return (
    <Text>
      <Text color={color}>{'█'.repeat(filled)}</Text>
      <Text dimColor>{'░'.repeat(width - filled)}</Text>
    </Text>
  )
}

export interface ProgressProps {
  label: string
  done: number
  total: number
  /** Seconds since the start, shown after the label. */
  elapsed?: number
  /** Redraw count, for the moving block of a step that cannot be measured. */
  tick?: number
}

/**
 * One step not yet done (a whole apply in one transaction): there is nothing to measure, so
 * the bar shows a block moving back and forth and the time going by, never a 0% that stays.
 */
export const isIndeterminate = (done: number, total: number) => total <= 1 && done < total

/** Where the moving block of an indeterminate bar starts at redraw `tick`. */
export function blockAt(tick: number, width: number, block: number): number {
  const span = Math.max(1, width - block)
  const phase = tick % (2 * span)
  return phase <= span ? phase : 2 * span - phase
}

function MovingBar({tick, width = 40}: {tick: number; width?: number}) {
  const block = 6
  const at = blockAt(tick, width, block)
  return (
    <Text>
      <Text dimColor>{'░'.repeat(at)}</Text>
      <Text color="green">{'█'.repeat(block)}</Text>
      <Text dimColor>{'░'.repeat(width - block - at)}</Text>
    </Text>
  )
}

export function Progress({label, done, total, elapsed, tick = 0}: ProgressProps) {
  const ratio = total > 0 ? done / total : 0
  const moving = isIndeterminate(done, total)
  return (
    <Box>
      {moving ? <MovingBar tick={tick} /> : <Bar ratio={ratio} width={40} />}
      <Text> {moving ? '    ' : `${String(Math.floor(ratio * 100)).padStart(3)}%`} </Text>
      <Text>{label}</Text>
      {elapsed !== undefined ? <Text dimColor> {elapsed.toFixed(1)}s</Text> : null}
    </Box>
  )
}

export interface ProgressHandle {
  update(done: number, total: number, label: string): void
  stop(): void
}

/**
 * A terminal that says it has no columns (some ptys say 0): ink would draw one character a line
 * and clear the screen at each frame. Plain lines instead, one a second at most, and the last.
 */
export function plainProgress(stream: NodeJS.WriteStream, now: () => number = Date.now): ProgressHandle {
  const start = now()
  let last = -Infinity
  let state: ProgressProps = {label: '', done: 0, total: 0}
  let written = ''
  const line = () => {
    const {done, total, label} = state
    const part = isIndeterminate(done, total) ? '' : `${String(Math.floor((total > 0 ? done / total : 0) * 100)).padStart(3)}% `
    return `${part}${label} ${((now() - start) / 1000).toFixed(1)}s`
  }
  const write = () => {
    last = now()
    written = `${state.done}/${state.total} ${state.label}`
    stream.write(`${line()}\n`)
  }
  return {
    update(done, total, label) {
      state = {done, total, label}
      if (now() - last >= 1000) write()
    },
    stop() {
      if (written !== `${state.done}/${state.total} ${state.label}`) write()
    },
  }
}

/** Draws a progress bar on `stream` (a terminal), redrawn at most every 50 ms; plain lines where it has no width. */
export function startProgress(stream: NodeJS.WriteStream = process.stdout): ProgressHandle {
  if (!((stream.columns ?? 0) > 0)) return plainProgress(stream)
  const start = Date.now()
  let state: ProgressProps = {label: '', done: 0, total: 0}
  let last = 0
  let tick = 0
  let timer: NodeJS.Timeout | undefined
  // While one unmeasurable step runs, redraw on a clock so the block moves and the time runs.
  let clock: NodeJS.Timeout | undefined
  const instance: Instance = render(<Progress {...state} elapsed={0} />, {stdout: stream, patchConsole: false, exitOnCtrlC: false})
  const draw = () => {
    timer = undefined
    last = Date.now()
    instance.rerender(<Progress {...state} elapsed={(Date.now() - start) / 1000} tick={tick++} />)
  }
  const keepTime = () => {
    if (isIndeterminate(state.done, state.total)) clock ??= setInterval(draw, 100)
    else if (clock) clock = void clearInterval(clock)
  }
  return {
    update(done, total, label) {
      state = {done, total, label}
      keepTime()
      if (Date.now() - last >= 50 || done >= total) draw()
      else timer ??= setTimeout(draw, 50)
    },
    stop() {
      if (timer) clearTimeout(timer)
      if (clock) clearInterval(clock)
      draw()
      instance.unmount()
    },
  }
}
