import Fastify from 'fastify'
import {describe, expect, it} from 'vitest'
import {ServiceState} from '../../src/http/service-state.js'

/** An app the service state counts: /slow answers once `release` is called, /fast at once. */
function servedApp() {
  const app = Fastify()
  const service = new ServiceState()
  service.attach(app)
  let release!: () => void
  const held = new Promise<void>((r) => (release = r))
  app.get('/slow', async () => {
    await held
    return {ok: true}
  })
  app.get('/fast', async () => ({ok: true}))
  return {app, service, release}
}

// What the HTTP layer tells the store about the requests it serves: whether they overlapped, so a
// write's sync leaves the event loop to the others (store-durable.test.ts).
describe('the service state', () => {
  it('says requests overlapped when one arrived while another was in flight, once per overlap', async () => {
    const {app, service, release} = servedApp()
    try {
      // One request at a time: no overlap.
      await app.inject('/fast')
      await app.inject('/fast')
      expect(service.overlapped()).toBe(false)
      // One arrives while another waits: overlapped, and still so while both are in flight.
      const slow = app.inject('/slow')
      await new Promise((r) => setImmediate(r))
      await app.inject('/fast')
      expect(service.overlapped()).toBe(true)
      release()
      await slow
      // Asked again with nothing new: the overlap was told once.
      expect(service.overlapped()).toBe(false)
      expect(service.inFlight).toBe(0)
    } finally {
      await app.close()
    }
  })

  // The warm-up rehearsal waits for it, so that it does not hold a start's first requests.
  it('is quiet only once no request has been in flight for the time asked, on end', async () => {
    const {app, service, release} = servedApp()
    try {
      const slow = app.inject('/slow')
      await new Promise((r) => setImmediate(r))
      let quietAt = 0
      const quiet = service.quiet(50).then(() => (quietAt = performance.now()))
      await new Promise((r) => setTimeout(r, 80))
      // A request in flight all along: not quiet, however long it takes.
      expect(quietAt).toBe(0)
      release()
      await slow
      const answeredAt = performance.now()
      await quiet
      expect(quietAt - answeredAt).toBeGreaterThanOrEqual(45)
      // With nothing served since it was asked: the time asked, counted from the call (a
      // request may be waiting unread in its socket).
      await new Promise((r) => setTimeout(r, 60))
      const asked = performance.now()
      await service.quiet(50)
      expect(performance.now() - asked).toBeGreaterThanOrEqual(45)
    } finally {
      await app.close()
    }
  })
})
