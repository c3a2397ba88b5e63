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
}

export function Progress({label, done, total, elapsed}: ProgressProps) {
  const ratio = total > 0 ? done / total : 0
  return (
    <Box>
      <Bar ratio={ratio} width={40} />
      <Text> {String(Math.floor(ratio * 100)).padStart(3)}% </Text>
      <Text>{label}</Text>
      {elapsed !== undefined ? <Text dimColor> {elapsed.toFixed(1)}s</Text> : null}
    </Box>
  )
}

export interface ProgressHandle {
  update(done: number, total: number, label: string): void
  stop(): void
}

/** Draws a progress bar on `stream` (a terminal), redrawn at most every 50 ms. */
export function startProgress(stream: NodeJS.WriteStream = process.stdout): ProgressHandle {
  const start = Date.now()
  let state: ProgressProps = {label: '', done: 0, total: 0}
  let last = 0
  let timer: NodeJS.Timeout | undefined
  const instance: Instance = render(<Progress {...state} elapsed={0} />, {stdout: stream, patchConsole: false, exitOnCtrlC: false})
  const draw = () => {
    timer = undefined
    last = Date.now()
    instance.rerender(<Progress {...state} elapsed={(Date.now() - start) / 1000} />)
  }
  return {
    update(done, total, label) {
      state = {done, total, label}
      if (Date.now() - last >= 50 || done >= total) draw()
      else timer ??= setTimeout(draw, 50)
    },
    stop() {
      if (timer) clearTimeout(timer)
      draw()
      instance.unmount()
    },
  }
}
