#!/usr/bin/env -S node --max-semi-space-size=64
import {statSync} from 'node:fs'

const bundle = new URL('../dist/cli/index.js', import.meta.url)
const mtime = (url) => statSync(url, {throwIfNoEntry: false})?.mtimeMs

// dist/cli/index.js (npm run build) is @oclif/core and the command table in one bundle. If tsc
// alone has compiled since it was made (its dist/.tsbuildinfo is newer) or there is none, run
// tsc's dist/commands with @oclif/core from node_modules instead: slower, never stale.
const built = mtime(bundle)
if (built !== undefined && built >= (mtime(new URL('../dist/.tsbuildinfo', import.meta.url)) ?? 0)) {
  const {execute} = await import(bundle)
  await execute({dir: import.meta.url})
} else {
  const [{readFileSync}, {fileURLToPath}, {execute}] = await Promise.all([import('node:fs'), import('node:url'), import('@oclif/core')])
  const pjson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  await execute({
    loadOptions: {
      root: fileURLToPath(new URL('..', import.meta.url)),
      pjson: {...pjson, oclif: {...pjson.oclif, commands: './dist/commands'}},
    },
  })
}
