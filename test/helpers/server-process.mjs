// A placemat server in a process of its own on a database file (the daemon without its pid
// record, so that two can share one file as two hosts' daemons would share a database):
// prints its URL on the first line, serves until stdin closes.
import {startServer} from '../../dist/src/daemon/server.js'

const [file] = process.argv.slice(2)
const server = await startServer({db: file, host: '127.0.0.1', port: 0, auth: 'noauth2'})
process.stdout.write(`${server.url}\n`)
process.stdin.resume()
process.stdin.on('end', async () => {
  await server.close()
  process.exit(0)
})
