// The image's HEALTHCHECK: exit 0 when the daemon's health route answers 200, else 1. The image
// has no shell or curl; node is there. PLACEMAT_HEALTH_URL names another port or path.
const url = process.env.PLACEMAT_HEALTH_URL || 'http://127.0.0.1:8778/placemat/v1/health'
try {
  const res = await fetch(url, {signal: AbortSignal.timeout(4000)})
  if (res.status !== 200) {
    console.error(`${url}: ${res.status} ${(await res.text()).slice(0, 300)}`)
    process.exit(1)
  }
} catch (err) {
  console.error(`${url}: ${err.cause?.code ?? err.message}`)
  process.exit(1)
}
