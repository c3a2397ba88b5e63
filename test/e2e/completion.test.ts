/** Shell completion (oclif's autocomplete plugin): the bash function completes placemat's commands and flags. */
import {execFile} from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {placemat} from '../helpers/cli.js'

const bash = (script: string, env: Record<string, string>) =>
  new Promise<string>((resolve, reject) =>
    execFile('bash', ['-c', script], {env: {...process.env, ...env}}, (err, stdout, stderr) =>
      err ? reject(new Error(stderr)) : resolve(stdout),
    ),
  )

describe('shell completion', () => {
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-complete-'))
  afterAll(() => fs.rmSync(cache, {recursive: true, force: true}))

  it('bash completes topics, commands and flags', async () => {
    const env = {XDG_CACHE_HOME: cache}
    const built = await placemat(['autocomplete', '--refresh-cache'], {env})
    expect(built.code, built.stderr).toBe(0)
    const setup = await placemat(['autocomplete', 'script', 'bash'], {env})
    expect(setup.stdout).toContain('placemat autocomplete setup')
    const file = path.join(cache, 'placemat', 'autocomplete', 'functions', 'bash', 'placemat.bash')
    expect(fs.existsSync(file)).toBe(true)
    const complete = (words: string[]) =>
      bash(
        `source '${file}'; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _placemat_autocomplete; printf '%s\\n' "\${COMPREPLY[@]}"`,
        env,
      ).then((o) => o.split('\n').filter(Boolean))
    expect(await complete(['placemat', 'topol'])).toContain('topology')
    expect(await complete(['placemat', 'rack', 'li'])).toContain('list')
    expect(await complete(['placemat', 'provider', 'list', '--sort'])).toContain('--sort-column')
  })
})
