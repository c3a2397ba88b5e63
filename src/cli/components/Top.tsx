/**
 * The live view of `placemat top` (ink): capacity and usage per resource class as bars,
 * the fullest providers, recent claims; refreshed every `interval` seconds. q or Esc quits.
 */
import {useEffect, useState} from 'react'
import {Box, Text, render, useApp, useInput, useStdin} from 'ink'
import {Bar} from './Progress.js'
import {clock, disabledText, fmtPercent, fmtResources, type Frame} from '../render/top-frame.js'

const barColor = (ratio: number) => (ratio >= 0.9 ? 'red' : ratio >= 0.7 ? 'yellow' : 'green')

export function TopView({frame, error, interval}: {frame?: Frame; error?: string; interval: number}) {
  if (!frame) return <Text dimColor>{error ? `error: ${error}` : 'reading...'}</Text>
  const cw = Math.max(14, ...frame.classes.map((c) => c.resource_class.length))
  const pw = Math.max(8, ...frame.fullest.map((r) => r.name.length))
  const rw = Math.max(5, ...frame.fullest.map((r) => r.resource_class.length))
  return (
    <Box flexDirection="column">
      <Box>
        <Text bold>placemat top </Text>
        <Text>
          {frame.endpoint} ({frame.transport}) {frame.at.slice(0, 19).replace('T', ' ')}Z
        </Text>
        <Text dimColor> every {interval}s, q to quit</Text>
      </Box>
      <Text>
        {frame.providers} providers, {frame.consumers} consumers with allocations
        {frame.disabled_hosts.length ? <Text color="yellow">{disabledText(frame)}</Text> : null}
        {error ? <Text color="red"> (last refresh failed: {error})</Text> : null}
      </Text>
      <Box marginTop={1} flexDirection="column">
        <Text bold>{'RESOURCE CLASS'.padEnd(cw)} USAGE</Text>
        {frame.classes.map((c) => {
          const ratio = c.capacity ? c.used / c.capacity : 0
          return (
            <Box key={c.resource_class}>
              <Text>{c.resource_class.padEnd(cw)} </Text>
              <Bar ratio={ratio} width={30} color={barColor(ratio)} />
              <Text>
                {' '}
                {c.used} / {c.capacity} {fmtPercent(c.used, c.capacity)}
              </Text>
            </Box>
          )
        })}
        {frame.classes.length ? null : <Text dimColor>(no inventories)</Text>}
      </Box>
      <Box marginTop={1} flexDirection="column">
        <Text bold>FULLEST PROVIDERS</Text>
        {frame.fullest.map((r) => (
          <Box key={r.uuid}>
            <Text>
              {r.name.padEnd(pw)} {r.resource_class.padEnd(rw)}{' '}
            </Text>
            <Bar ratio={r.ratio} width={20} color={barColor(r.ratio)} />
            <Text>
              {' '}
              {r.used}/{r.capacity} {fmtPercent(r.used, r.capacity)}
            </Text>
            {r.disabled ? <Text color="yellow"> (host disabled)</Text> : null}
          </Box>
        ))}
        {frame.fullest.length ? null : <Text dimColor>(nothing allocated)</Text>}
      </Box>
      {frame.capacity ? (
        <Box marginTop={1} flexDirection="column">
          <Text bold>RACKS BY FIT FOR {frame.capacity.flavor} (fullest first)</Text>
          {frame.capacity.racks.map((r) => (
            <Text key={r.rack}>
              <Text dimColor>
                {r.room ?? '-'}/{r.row ?? '-'}/
              </Text>
              {r.rack} <Text color={r.fit === 0 ? 'red' : r.fit < r.pooled ? 'yellow' : 'green'}>fit {r.fit}</Text>
              <Text dimColor> ({r.pooled} if it were one host)</Text>
            </Text>
          ))}
          {frame.capacity.racks.length ? null : <Text dimColor>(no racks)</Text>}
        </Box>
      ) : null}
      <Box marginTop={1} flexDirection="column">
        <Text bold>RECENT CLAIMS</Text>
        {frame.claims.map((c) => (
          <Text key={c.consumer + c.at}>
            <Text dimColor>{clock(c.at)}</Text>{' '}
            <Text color={c.change === 'removed' ? 'red' : c.change === 'recent' ? undefined : 'green'}>{c.change.padEnd(7)}</Text>{' '}
            {c.consumer} {fmtResources(c.resources)} <Text dimColor>on {c.providers.join(',')}</Text>
          </Text>
        ))}
        {frame.claims.length ? null : <Text dimColor>(none yet)</Text>}
      </Box>
    </Box>
  )
}

function TopApp({next, interval}: {next: () => Promise<Frame>; interval: number}) {
  const [frame, setFrame] = useState<Frame>()
  const [error, setError] = useState<string>()
  const {exit} = useApp()
  const {isRawModeSupported} = useStdin()
  useInput(
    (input, key) => {
      if (input === 'q' || key.escape) exit()
    },
    {isActive: Boolean(isRawModeSupported)},
  )
  useEffect(() => {
    let stopped = false
    let timer: NodeJS.Timeout | undefined
    const tick = async () => {
      try {
        const f = await next()
        if (stopped) return
        setFrame(f)
        setError(undefined)
      } catch (err) {
        if (!stopped) setError((err as Error).message)
      }
      if (!stopped) timer = setTimeout(tick, interval * 1000)
    }
    void tick()
    return () => {
      stopped = true
      if (timer) clearTimeout(timer)
    }
  }, [next, interval])
  return <TopView frame={frame} error={error} interval={interval} />
}

/** Runs the live view until q, Esc or Ctrl-C. */
export async function runTop(next: () => Promise<Frame>, interval: number): Promise<void> {
  const instance = render(<TopApp next={next} interval={interval} />, {patchConsole: true})
  await instance.waitUntilExit()
}
