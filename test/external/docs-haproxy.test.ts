/** The haproxy.cfg of the guide behind a balancer passes `haproxy -c` without a warning. */
import {execFile} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {makeCa, opensslAvailable, serverCert} from '../helpers/certs.js'
import {DOCS} from '../helpers/docs.js'
import {HAPROXY, haproxyAvailable} from '../helpers/haproxy.js'

/** The haproxy.cfg blocks (a code block starting `# haproxy.cfg:`), each with the file it is in. */
const haproxyConfigs = DOCS.flatMap(({file, text}) => {
  const block = text.match(/^# haproxy\.cfg:.*\n(?:(?!```)[^\n]*\n)*/m)
  return block ? [{file, block: block[0]}] : []
})

let dir: string
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-haproxy-doc-'))
})
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}))

describe("the balancer guide's haproxy.cfg", () => {
  it.skipIf(!haproxyAvailable || !opensslAvailable)(
    `give haproxy a configuration it takes without a warning (${haproxyConfigs.map((c) => c.file).join(', ') || 'none found'})`,
    async () => {
      expect(
        haproxyConfigs.map((c) => c.file),
        'one haproxy.cfg block in the docs',
      ).toHaveLength(1)
      const {file: source, block} = haproxyConfigs[0]
      // The certificate the configuration names, made here.
      const ca = makeCa(dir)
      const cfg = block.replace('/etc/haproxy/cloud.example.pem', serverCert(ca, 'cloud').both)
      expect(cfg).not.toContain('/etc/haproxy/')
      const file = path.join(dir, 'haproxy.cfg')
      fs.writeFileSync(file, cfg)
      const checked = await new Promise<{code: number; text: string}>((resolve) =>
        execFile(HAPROXY, ['-c', '-f', file], (err, stdout, stderr) =>
          resolve({code: err ? Number(err.code ?? 1) : 0, text: stdout + stderr}),
        ),
      )
      expect(checked.code, `${source}: ${checked.text}`).toBe(0)
      expect(checked.text).not.toMatch(/WARNING|ALERT/)
      expect(checked.text).toMatch(/Configuration file is valid/)
    },
  )
})
