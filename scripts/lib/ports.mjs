// A TCP port free on loopback, for a daemon or a server a script starts.
import net from 'node:net'

/** A TCP port free on loopback now. */
export const freePort = () =>
  new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const {port} = srv.address()
      srv.close(() => resolve(port))
    })
  })
