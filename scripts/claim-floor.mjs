#!/usr/bin/env node
// The floor a claim is measured against (npm run bench -- --claim-profile): a bare node:http
// server that commits the rows a claim writes (the consumer, its allocations, each provider's
// generation) in one better-sqlite3 transaction, with placemat's durability (WAL, synchronous=FULL)
// on the same file system, and answers 204; and answers a GET with the bytes last POSTed to
// /answer (placemat's own candidates answer, so both send as much). No validation, no journal, no
// State, no search: what any server must pay to answer a claim's two requests.
//
//   node scripts/claim-floor.mjs DBFILE     # prints the port it listens on, on stdout
import http from 'node:http'
import Database from 'better-sqlite3'

const db = new Database(process.argv[2])
db.pragma('journal_mode = WAL')
db.pragma(`synchronous = ${process.argv[3] === 'normal' ? 'NORMAL' : 'FULL'}`)
db.exec(`
  create table if not exists resource_providers (uuid varchar(36) primary key, generation integer not null, updated_at bigint not null);
  create table if not exists consumers (uuid varchar(36) primary key, project_id varchar(255) not null, user_id varchar(255) not null,
    consumer_type varchar(255), generation integer not null, created_at bigint not null, updated_at bigint not null);
  create table if not exists allocations (consumer_uuid varchar(36) not null, provider_uuid varchar(36) not null,
    resource_class varchar(255) not null, used integer not null, primary key (consumer_uuid, provider_uuid, resource_class));
  create index if not exists allocations_provider on allocations (provider_uuid);
`)
const consumer = db.prepare(`insert into consumers (uuid, project_id, user_id, consumer_type, generation, created_at, updated_at)
  values (?, ?, ?, ?, 1, ?, ?) on conflict (uuid) do update set generation = generation + 1, updated_at = excluded.updated_at`)
const clear = db.prepare('delete from allocations where consumer_uuid = ?')
const allocation = db.prepare('insert into allocations (consumer_uuid, provider_uuid, resource_class, used) values (?, ?, ?, ?)')
const generation = db.prepare(`insert into resource_providers (uuid, generation, updated_at) values (?, 1, ?)
  on conflict (uuid) do update set generation = generation + 1, updated_at = excluded.updated_at`)
const claim = db.transaction((uuid, body, now) => {
  consumer.run(uuid, body.project_id, body.user_id, body.consumer_type ?? null, now, now)
  clear.run(uuid)
  for (const [rp, {resources}] of Object.entries(body.allocations)) {
    for (const [rc, used] of Object.entries(resources)) allocation.run(uuid, rp, rc, used)
    generation.run(rp, now)
  }
})

let answer = Buffer.from('{}')
const server = http.createServer((req, res) => {
  if (req.method === 'GET') {
    res.writeHead(200, {'content-type': 'application/json', 'content-length': answer.length}).end(answer)
    return
  }
  const chunks = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', () => {
    if (req.url === '/answer') {
      answer = Buffer.concat(chunks)
      res.writeHead(204).end()
      return
    }
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      const t0 = performance.now()
      claim(req.url.slice(req.url.lastIndexOf('/') + 1), body, Date.now())
      // The transaction's time (its COMMIT and fsync in it), for the profile to set beside placemat's.
      res.writeHead(204, {'x-transaction-ms': (performance.now() - t0).toFixed(4)}).end()
    } catch (err) {
      res.writeHead(400, {'content-type': 'text/plain'}).end(String(err))
    }
  })
})
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`))
process.on('SIGTERM', () => server.close(() => (db.close(), process.exit(0))))
