// A TCP port free on loopback, for a daemon or a server a script starts.
import fs from 'node:fs'
import net from 'node:net'

/**
 * The first port of the kernel's ephemeral range: ports from it are handed to outgoing
 * connections, so one found free there can be taken by any connect() before the server binds it
 * (seen in CI: a Galera joiner lost its state-transfer port that way and exited).
 */
const ephemeralLow = () => {
  try {
    return Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768
  } catch {
    return 32768
  }
}

const FIRST = 10000
const LAST = Math.max(FIRST + 1000, ephemeralLow() - 1)

const bindable = (port) =>
  new Promise((resolve) => {
    const srv = net.createServer()
    srv.once('error', () => resolve(false))
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)))
  })

/** A TCP port free on loopback now, below the ephemeral range (so no outgoing connection takes it). */
export const freePort = async () => {
  for (let tries = 0; tries < 200; tries++) {
    const port = FIRST + Math.floor(Math.random() * (LAST - FIRST))
    if (await bindable(port)) return port
  }
  throw new Error(`no free port on 127.0.0.1 between ${FIRST} and ${LAST}`)
}
