#!/usr/bin/env node
/**
 * Writes a cloud of N root providers (default 1,000,000) shaped as placeload makes them, as
 * files for `placemat import` and `placemat apply`, streamed so that N is bounded by the disk
 * alone. Each provider: VCPU 32 (max_unit 16), MEMORY_MB 8192 (min_unit 128), DISK_GB 8192
 * (min_unit 5); one to three of three aggregates; one to three of HW_CPU_X86_AVX2,
 * HW_CPU_X86_SSE2 and STORAGE_DISK_SSD. Deterministic: the same N gives the same files.
 *
 *   node scripts/gen-huge.mjs --snapshot /tmp/huge.json          # placemat import /tmp/huge.json --db F
 *   node scripts/gen-huge.mjs --apply /tmp/huge-apply.json 100000 # placemat apply /tmp/huge-apply.json --db F
 *
 * Options: --consumers K (the snapshot also holds K consumers, each with one allocation on
 * provider i), --compact (the snapshot one provider a line instead of `placemat export`'s
 * indented JSON). Providers are named huge-NNNNNNN and have uuids of the form
 * 00000000-0000-4000-8000-NNNNNNNNNNNN (i in hex), the same in both files.
 */
import fs from 'node:fs'
import {once} from 'node:events'

const args = process.argv.slice(2)
const option = (name) => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1] : undefined
}
const snapshotFile = option('--snapshot')
const applyFile = option('--apply')
const consumers = Number(option('--consumers') ?? 0)
const compact = args.includes('--compact')
const valued = new Set(['--snapshot', '--apply', '--consumers'])
const n = Number(args.find((a, i) => /^[0-9]+$/.test(a) && !valued.has(args[i - 1])) ?? 1_000_000)
if ((!snapshotFile && !applyFile) || !Number.isInteger(n) || n < 1 || !Number.isInteger(consumers) || consumers < 0 || consumers > n) {
  process.stderr.write('usage: gen-huge.mjs [--snapshot FILE] [--apply FILE] [N] [--consumers K] [--compact]\n')
  process.exit(2)
}

const AGGREGATES = ['0a000000-0000-4000-8000-000000000001', '0a000000-0000-4000-8000-000000000002', '0a000000-0000-4000-8000-000000000003']
const TRAITS = ['HW_CPU_X86_AVX2', 'HW_CPU_X86_SSE2', 'STORAGE_DISK_SSD']
const INVENTORY_DEFAULTS = {total: 0, reserved: 0, min_unit: 1, max_unit: 2147483647, step_size: 1, allocation_ratio: 1}
const INVENTORIES = {
  DISK_GB: {total: 8192, min_unit: 5},
  MEMORY_MB: {total: 8192, min_unit: 128},
  VCPU: {total: 32, max_unit: 16},
}

const uuidOf = (i) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`
const nameOf = (i) => `huge-${String(i).padStart(7, '0')}`
/** One to three of three, varying with i: every non-empty subset in turn. */
const someOf = (list, i) => list.filter((_, k) => ((i % 7) + 1) & (1 << k))

/** A writer that waits when the stream's buffer is full, so memory holds a little of the file. */
function writer(file) {
  const out = fs.createWriteStream(file)
  return {
    async write(text) {
      if (!out.write(text)) await once(out, 'drain')
    },
    async end() {
      out.end()
      await once(out, 'finish')
    },
  }
}

async function writeSnapshot(file) {
  const out = writer(file)
  const fullInventories = Object.fromEntries(Object.entries(INVENTORIES).map(([rc, inv]) => [rc, {...INVENTORY_DEFAULTS, ...inv}]))
  const indent = (text, pad) => text.replaceAll('\n', `\n${pad}`)
  const item = (value) => (compact ? JSON.stringify(value) : indent(JSON.stringify(value, null, 2), '    '))
  await out.write('{\n  "placemat_snapshot": 1,\n  "resource_classes": [],\n  "traits": [],\n  "providers": [')
  for (let i = 0; i < n; i++) {
    const p = {
      uuid: uuidOf(i),
      name: nameOf(i),
      generation: i < consumers ? 2 : 1,
      parent_provider_uuid: null,
      inventories: fullInventories,
      traits: someOf(TRAITS, i),
      aggregates: someOf(AGGREGATES, i),
    }
    await out.write(`${i ? ',' : ''}\n    ${item(p)}`)
  }
  await out.write(`\n  ],\n  "consumers": [`)
  for (let i = 0; i < consumers; i++) {
    const c = {
      uuid: `0c000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`,
      project_id: 'project',
      user_id: 'user',
      consumer_type: null,
      generation: 1,
      allocations: {[uuidOf(i)]: {MEMORY_MB: 128, VCPU: 1}},
    }
    await out.write(`${i ? ',' : ''}\n    ${item(c)}`)
  }
  await out.write('\n  ]\n}\n')
  await out.end()
}

async function writeApply(file) {
  const out = writer(file)
  await out.write(`{"aggregates": ${JSON.stringify(Object.fromEntries(AGGREGATES.map((u, k) => [`agg${k + 1}`, u])))},\n"providers": [`)
  for (let i = 0; i < n; i++) {
    const p = {
      name: nameOf(i),
      uuid: uuidOf(i),
      inventories: INVENTORIES,
      traits: someOf(TRAITS, i),
      aggregates: someOf(AGGREGATES, i).map((u) => `agg${AGGREGATES.indexOf(u) + 1}`),
    }
    await out.write(`${i ? ',' : ''}\n${JSON.stringify(p)}`)
  }
  await out.write('\n]}\n')
  await out.end()
}

if (snapshotFile) await writeSnapshot(snapshotFile)
if (applyFile) await writeApply(applyFile)
