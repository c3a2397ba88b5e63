/**
 * The man pages `npm run build` writes into man/ (scripts/man-pages.mjs) from the commands' help:
 * a page for every visible command of the built CLI (oclif.manifest.json) and placemat(1), each
 * listed in package.json's `man` (what npm links on a global install; it reads no directory of
 * pages). A command's flags and examples are in its page, read back from the roff with its escapes
 * undone; placemat(1) holds README.md's exit codes and the variables it names. Where groff is
 * installed every page renders without a warning, and where man is, `man -l` shows a page's flags.
 */
import {execFile} from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {ROOT} from '../helpers/cli.js'

const MAN = path.join(ROOT, 'man')
const PJSON = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'))
const MANIFEST = JSON.parse(fs.readFileSync(path.join(ROOT, 'oclif.manifest.json'), 'utf8'))
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8')

interface Flag {
  name: string
  char?: string
}
interface Command {
  id: string
  hidden?: boolean
  flags: Record<string, Flag>
  examples?: Array<string | {description: string; command: string}>
}
const COMMANDS = (Object.values(MANIFEST.commands) as Command[]).filter((c) => !c.hidden).sort((a, b) => (a.id < b.id ? -1 : 1))
const pageOf = (id: string) => `placemat-${id.split(':').join('-')}.1`
const read = (page: string) => fs.readFileSync(path.join(MAN, page), 'utf8')

/** What a reader reads of the roff source, line by line: escapes undone, fonts and macros' dots kept. */
const asRead = (roff: string) =>
  roff
    .replace(/\\f[BIRP]|\\%|\\&/g, '')
    .replace(/\\\(aq/g, "'")
    .replace(/\\\(ga/g, '`')
    .replace(/\\-/g, '-')
    .replace(/\\e/g, '\\')

/** An example as the page must show it: the templates filled in, a description as a # comment. */
const exampleText = (id: string, e: string | {description: string; command: string}) => {
  const fill = (s: string) => s.replace(/<%=\s*config\.bin\s*%>/g, 'placemat').replace(/<%=\s*command\.id\s*%>/g, id.split(':').join(' '))
  return typeof e === 'string' ? fill(e) : `# ${fill(e.description)}\n${fill(e.command)}`
}

const run = (file: string, args: string[], env: NodeJS.ProcessEnv = process.env) =>
  new Promise<{code: number; stdout: string; stderr: string}>((resolve) =>
    execFile(file, args, {cwd: ROOT, env, maxBuffer: 16 << 20}, (err, stdout, stderr) =>
      resolve({code: err ? Number((err as any).code) || 1 : 0, stdout: String(stdout), stderr: String(stderr)}),
    ),
  )

const GROFF = ['/usr/bin/groff', '/usr/local/bin/groff'].find((f) => fs.existsSync(f))
const MAN_BIN = ['/usr/bin/man', '/usr/local/bin/man'].find((f) => fs.existsSync(f))
if (!GROFF) console.warn('man-pages.test.ts: no groff here: rendering not checked')
if (!MAN_BIN) console.warn('man-pages.test.ts: no man here: man -l not checked')

/** The macros the pages may use; any other line starting with . or ' is text that was not guarded. */
const MACROS = new Set(['TH', 'SH', 'SS', 'TP', 'PP', 'IP', 'PD', 'RS', 'RE', 'nf', 'fi', 'B', 'br', 'nh', 'ad', '\\"'])

describe('the man pages', () => {
  const pages = fs.existsSync(MAN) ? fs.readdirSync(MAN).sort() : []

  it('are a page for every visible command, and placemat(1), and nothing else', () => {
    expect(COMMANDS.length).toBeGreaterThan(50)
    expect(pages).toEqual(['placemat.1', ...COMMANDS.map((c) => pageOf(c.id))].sort())
  })

  it("are every one in package.json's man list (what npm links into share/man/man1), and man/ is in the package", () => {
    expect([...PJSON.man].sort()).toEqual(pages.map((p) => `./man/${p}`))
    expect(PJSON.files).toContain('man')
    expect(PJSON.directories?.man).toBe('./man')
  })

  it('are plain ASCII roff: every line a known macro or guarded text, every hyphen \\-, the version in .TH, no date or path', () => {
    for (const page of pages) {
      const text = read(page)
      const lines = text.split('\n')
      expect(lines[1], page).toBe(
        `.TH ${page.replace(/\.1$/, '').toUpperCase().replace(/-/g, '\\-')} 1 "" "placemat ${PJSON.version}" "placemat Manual"`,
      )
      expect(/[^\n\x20-\x7e]/.test(text), `${page}: a character outside ASCII`).toBe(false)
      expect(text, page).not.toContain(ROOT)
      for (const line of lines.slice(1)) {
        if (/^[.']/.test(line)) expect(MACROS.has(line.slice(1).split(' ')[0]), `${page}: ${line}`).toBe(true)
        expect(/(^|[^\\])-/.test(line), `${page}: a bare hyphen in ${line}`).toBe(false)
      }
    }
  })

  it("hold each command's name, flags, arguments' names and examples", () => {
    for (const command of COMMANDS) {
      const page = pageOf(command.id)
      const text = asRead(read(page))
      expect(text, page).toContain(`.SH NAME\n${page.replace(/\.1$/, '')} - `)
      expect(text, page).toContain(`.B "placemat ${command.id.split(':').join(' ')}"`)
      for (const flag of Object.values(command.flags)) {
        expect(text, `${page}: --${flag.name}`).toMatch(new RegExp(`--(\\[no-\\])?${flag.name}(?![\\w-])`))
        if (flag.char) expect(text, `${page}: -${flag.char}`).toMatch(new RegExp(`(^|[\\s,(\\[])-${flag.char}(?![\\w-])`, 'm'))
      }
      for (const e of command.examples ?? []) expect(text, `${page}: example`).toContain(`\n${exampleText(command.id, e)}\n`)
      expect(text, page).toContain('.SH SEE ALSO\nplacemat(1)')
    }
  })

  it("placemat(1) names every command, README.md's exit codes and the variables README.md names", () => {
    const text = asRead(read('placemat.1'))
    for (const command of COMMANDS) expect(text).toContain(`\nplacemat ${command.id.split(':').join(' ')}\n`)
    const exits = README.slice(README.indexOf('## Exit codes'))
    const codes = [...exits.slice(0, exits.indexOf('\n## ')).matchAll(/^\| *(\d+) *\| *(.+?) *\|$/gm)]
    expect(codes.length).toBeGreaterThanOrEqual(10)
    const status = text.slice(text.indexOf('.SH EXIT STATUS'), text.indexOf('.SH ENVIRONMENT'))
    for (const [, code, meaning] of codes) expect(status).toContain(`.TP\n${code}\n${meaning.replace(/`/g, '')}\n`)
    const environment = text.slice(text.indexOf('.SH ENVIRONMENT'), text.indexOf('.SH SEE ALSO'))
    const named = new Set([...README.matchAll(/\b(PLACEMAT_[A-Z_]+|XDG_DATA_HOME)\b/g)].map((m) => m[1]))
    expect(named.size).toBeGreaterThanOrEqual(3)
    for (const name of named) expect(environment).toMatch(new RegExp(`\\.TP\\n(.*, )?${name}(,|\\n)`))
  })

  it.skipIf(!GROFF)('render with groff -man -Tutf8 -ww without a warning', async () => {
    for (const page of pages) {
      const r = await run(GROFF!, ['-man', '-Tutf8', '-ww', '-z', path.join(MAN, page)])
      expect(r.stderr, page).toBe('')
      expect(r.code, page).toBe(0)
    }
  })

  it.skipIf(!MAN_BIN)('man -l shows placemat-provider-list(1) with its flags, the common ones named', async () => {
    const r = await run(MAN_BIN!, ['-l', '-P', 'cat', path.join(MAN, 'placemat-provider-list.1')], {
      ...process.env,
      MANPAGER: 'cat',
      PAGER: 'cat',
      MANWIDTH: '80',
    })
    expect(r.code, r.stderr).toBe(0)
    const shown = r.stdout.replace(/.\x08/g, '')
    expect(shown).toMatch(/^PLACEMAT-PROVIDER-LIST\(1\)/)
    expect(shown).toMatch(/^NAME\n {7}placemat-provider-list - list resource providers/m)
    for (const flag of ['--resources <value>', '--member-of <value>', '--required <value>', '--in-tree <value>'])
      expect(shown).toContain(`\n       ${flag}\n`)
    expect(shown).toMatch(/Connection flags, as in placemat\(1\): --url, --db, --token\./)
    expect(shown).toContain('placemat provider list --in-tree $ROOT -c uuid,name')
  })
})
