#!/usr/bin/env node
// The man pages, written from each command's help as the command reference is
// (scripts/lib/command-help.mjs reads it; this script only writes roff): man/placemat.1 (what
// placemat is, its commands, the flag groups they share, exit codes, environment) and one page
// per command, man/placemat-TOPIC-COMMAND.1 (`man placemat-provider-list`, as git names its own).
// `npm run build` writes them; npm links them into PREFIX/share/man/man1 on a global install, by
// package.json's `man` list (npm reads no directory of pages at install: see docs/contributing.md).
//
//   node scripts/man-pages.mjs                 write man/ (and warn when package.json's man list is not its pages)
//   node scripts/man-pages.mjs --package-json  the same, and write package.json's man list
//   node scripts/man-pages.mjs --check         exit 1 when man/ or package.json's man list is not what the help says
//
// The output depends on the commands alone (and README.md's exit codes): sorted, no dates (.TH
// carries the package's version), no paths, no terminal width.
import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {
  argText,
  commandName,
  commonFlags,
  commonGroups,
  example,
  flagSyntax,
  flagText,
  loadConfig,
  ownFlagGroups,
  sharedGroups,
  staleBuild,
  usageWords,
  visibleCommands,
} from './lib/command-help.mjs'
import {bold, esc, guard, inline, italic, macro, prose, example as roffExample, textLine} from './lib/roff.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const MAN = 'man'

/** A command's page name: `placemat-provider-list`. */
export const pageName = (id) => ['placemat', ...id.split(':')].join('-')

/** A reference to a page: `placemat-provider-list(1)`, its name in bold. */
const ref = (name) => `${bold(name)}(1)`

const roff = {text: inline, literal: (s) => bold(String(s))}

/** Commands (or topics) whose help adds exit codes of its own, as README.md's exit code section names them. */
const OWN_EXIT_CODES = ['audit', 'db', 'upgrade', 'reshape', 'drain']

/**
 * What the environment changes, as README.md and docs/cli/overview.md say it; a flag's own
 * variable is also in its description (env NAME).
 */
const ENVIRONMENT = [
  ['PLACEMAT_URL', 'The Placement endpoint a command talks to when it is given neither `--url` nor `--db`.'],
  [
    'PLACEMAT_DB',
    'The database (a SQLite file, or a postgres:// or mysql:// URL) a command works on directly when it is given neither `--url` nor `--db`, and the database the daemon serves (else placemat.db in the data directory).',
  ],
  [
    'PLACEMAT_DB_FILE',
    'A file holding the database URL, as `--db-url-file` names one (the daemon commands, db upgrade and upgrade check).',
  ],
  ['PLACEMAT_TOKEN, OS_TOKEN', 'The token a command sends when `--token` is not given (the local daemon needs none: its own is found).'],
  [
    'PLACEMAT_HOME',
    "The data directory: the daemon's database, placemat.db (unless PLACEMAT_DB), the admin token beside it (admin-token), and the pid record (placemat.pid) by which a command finds the local daemon. Unset, it is $XDG_DATA_HOME/placemat, else ~/.local/share/placemat.",
  ],
  ['XDG_DATA_HOME', 'Where the data directory is when PLACEMAT_HOME is not set.'],
  ['PLACEMAT_DEBUG', 'Set (`PLACEMAT_DEBUG=1`), a bug in placemat (exit 70) prints where it happened.'],
  ['PLACEMAT_LOG_FORMAT', "`json` keeps a foreground daemon's log JSON lines on a terminal too (a file or a pipe always gets JSON)."],
  [
    'OS_CLOUD',
    'A cloud of clouds.yaml (merged with secure.yaml) to log in to, as `--os-cloud` names one; the files are looked for in OS_CLIENT_CONFIG_FILE and OS_CLIENT_SECURE_FILE, then ./, ~/.config/openstack/ and /etc/openstack/.',
  ],
  [
    'OS_AUTH_URL, OS_USERNAME, OS_PASSWORD, OS_PROJECT_NAME, ...',
    "Keystone credentials, as every OpenStack tool reads them, when they say how to authenticate and no `--token` is given. OS_REGION_NAME, OS_INTERFACE, OS_PLACEMENT_API_VERSION and OS_CACERT are the OpenStack flags' own.",
  ],
  ['NO_COLOR', 'Set (not empty), nothing is printed in colour (else colour only on a terminal).'],
  ['CLIFF_MAX_TERM_WIDTH, CLIFF_FIT_WIDTH', 'As `--max-width N` and `--fit-width` (CLIFF_FIT_WIDTH=1), as osc takes them.'],
]

/** README.md's exit codes: the rows of the table under `## Exit codes`, each [code, meaning as roff]. */
function readmeExitCodes() {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8')
  const section = /^## Exit codes\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(readme)?.[1] ?? ''
  const rows = [...section.matchAll(/^\| *(\d+) *\| *(.+?) *\|$/gm)].map((m) => [m[1], inline(m[2])])
  if (!rows.some(([code]) => code === '0')) throw new Error('man-pages: no exit code table under "## Exit codes" in README.md')
  return rows
}

/** The page's header: a title from its name, the package's version where a date would be. */
const header = (name, version) => [
  '.\\" Written by scripts/man-pages.mjs from the commands\' help (npm run build); do not edit by hand.',
  macro('TH', esc(name.toUpperCase()), '1', '', `placemat ${version}`, 'placemat Manual'),
  // No hyphenation, ragged right: the help is full of names to type (COMPUTE_STATUS_DISABLED,
  // --os-placement-api-version), never to be broken at a hyphen that is not theirs or spaced out.
  '.nh',
  '.ad l',
]

/** How a flag is written (`-f, --format <value>`): its names in bold, its value in italics. */
const syntax = (written) =>
  written
    .split(' ')
    .map((w) => (w.startsWith('-') ? `${bold(w.replace(/,$/, ''))}${w.endsWith(',') ? ',' : ''}` : italic(w)))
    .join(' ')

/** A common flag named in a command's page: by its long name, which a reader searches the page for (`--format (-f)`). */
const longName = (flag) => `${bold(`--${flag.name}`)}${flag.char ? ` (${bold(`-${flag.char}`)})` : ''}`

/** A flag as a .TP entry: how it is written, then its description and notes. */
const flagEntry = (flag) => ['.TP', syntax(flagSyntax(flag)), guard(flagText(flag, roff))]

/** A usage word after the command: a required flag as it is written, an argument (or [FLAGS]) in italics. */
const usageWord = (word) =>
  word.startsWith('-')
    ? syntax(word)
    : word.replace(/^(\[?)(.+?)(\.\.\.)?(\]?)$/, (_, open, name, more, close) => `${open}${italic(name)}${more ?? ''}${close}`)

const sentenceCase = (s) => (/^[A-Z][a-z]/.test(s) ? s[0].toLowerCase() + s.slice(1) : s).replace(/\.$/, '')

function commandPage(command, {commands, common, version}) {
  const name = pageName(command.id)
  const out = [...header(name, version), '.SH NAME', `${esc(name)} \\- ${inline(sentenceCase(command.summary ?? commandName(command.id)))}`]

  const [words, ...rest] = usageWords(command)
  out.push('.SH SYNOPSIS', macro('B', esc(words)))
  if (rest.length) out.push(rest.map(usageWord).join(' '))

  out.push('.SH DESCRIPTION')
  if (command.summary) out.push(textLine(command.summary))
  if (command.description) out.push(...prose(command.description))

  const args = Object.values(command.args ?? {})
  if (args.length) {
    out.push('.SH ARGUMENTS')
    for (const a of args) out.push('.TP', italic(a.name.toUpperCase()), guard(argText(a, inline)))
  }

  const own = ownFlagGroups(common, command)
  const shared = sharedGroups(common, command)
  if (own.length || shared.length) {
    out.push('.SH OPTIONS')
    for (const {title, flags} of own) {
      if (own.length > 1) out.push(macro('SS', title))
      for (const flag of flags) out.push(...flagEntry(flag))
    }
    if (shared.length) {
      if (own.length > 1) out.push(macro('SS', 'Common flags'))
      for (const {title, flags} of shared) out.push('.PP', `${esc(title)}, as in ${ref('placemat')}: ${flags.map(longName).join(', ')}.`)
    }
  }

  if (command.examples?.length) {
    out.push('.SH EXAMPLES', ...roffExample(command.examples.map((e) => example(command, e)).join('\n')))
  }

  const ownCodes = /\bexit(s| codes?:?)? \d/i.test(command.description ?? '') ? ', and those DESCRIPTION names' : ''
  out.push('.SH EXIT STATUS', `0 on success; otherwise the exit codes every command keeps, in ${ref('placemat')}${ownCodes}.`)

  // The rest of its topic, and the commands its help names.
  const family = command.id.split(':')[0]
  const text = `${command.summary ?? ''}\n${command.description ?? ''}`
  const related = commands.filter(
    (c) =>
      c.id !== command.id &&
      (c.id.split(':')[0] === family || new RegExp(`${commandName(c.id).replace(/ /g, '\\s+')}(?![\\w-])`).test(text)),
  )
  out.push('.SH SEE ALSO', [ref('placemat'), ...related.map((c) => ref(pageName(c.id)))].join(',\n'))
  return `${out.join('\n')}\n`
}

function mainPage({config, commands, common, version}) {
  const out = [...header('placemat', version)]
  out.push('.SH NAME', `placemat \\- ${inline(sentenceCase(config.pjson.description))}`)
  out.push(
    '.SH SYNOPSIS',
    `${bold('placemat')} ${italic('TOPIC')} ${italic('COMMAND')} [${italic('ARGUMENTS')}] [${italic('FLAGS')}]`,
    '.br',
    `${bold('placemat help')} [${italic('TOPIC')}]`,
    '.br',
    `${bold('placemat --version')}`,
  )
  out.push(
    '.SH DESCRIPTION',
    ...prose(`placemat places resources in a datacenter: a daemon that speaks the OpenStack Placement HTTP API
on an embedded SQLite database (or PostgreSQL, or MariaDB), a drop-in endpoint for Placement's
clients (nova, neutron, osc-placement, the openstacksdk), and this command line for operators.

Resource providers hold inventories of resource classes (VCPU, MEMORY_MB, DISK_GB, CUSTOM_*), carry
traits, sit in aggregates and nest in trees; consumers hold allocations against them. Hosts sit in
racks, rows and rooms; placement groups keep rules on where their members may be.

Every command talks to a placemat daemon, to any OpenStack Placement endpoint (\`--url\`, or a cloud's
Keystone with \`--os-cloud\`), or straight to a database file (\`--db\`); without any, to the daemon
of its data directory (see ENVIRONMENT). It prints tables, \`--json\`, \`--yaml\` or \`-f value\` for scripts.`),
  )

  out.push(
    '.SH COMMANDS',
    textLine(
      'Each command has a page of its own, placemat-TOPIC-COMMAND(1): `man placemat-provider-list`. `placemat help TOPIC` lists the commands of a topic with examples; `placemat COMMAND --help` prints the help these pages are written from.',
    ),
  )
  for (const c of commands) out.push('.TP', bold(commandName(c.id)), guard(inline(c.summary ?? '')))

  out.push(
    '.SH OPTIONS',
    textLine('The flag groups most commands take, the same in every command that takes them (each page names those it takes).'),
  )
  for (const {title, what, flags} of commonGroups(common)) {
    out.push(macro('SS', title), textLine(`The flags of ${what}.`))
    for (const flag of flags) out.push(...flagEntry(flag))
  }

  out.push('.SH EXIT STATUS', textLine('Every command keeps these:'))
  for (const [code, meaning] of readmeExitCodes()) out.push('.TP', bold(code), guard(meaning))
  const own = commands.filter((c) => OWN_EXIT_CODES.includes(c.id.split(':')[0]))
  out.push('.PP', `A few commands add their own, in their pages: ${own.map((c) => ref(pageName(c.id))).join(', ')}.`)

  out.push('.SH ENVIRONMENT')
  for (const [names, what] of ENVIRONMENT) out.push('.TP', names.split(', ').map(bold).join(', '), textLine(what))

  out.push(
    '.SH SEE ALSO',
    `${ref('placemat-provider-list')} and the other command pages above; ${bold('placemat help')};`,
    textLine("the command reference (docs/commands.md) and the guides (docs/) of placemat's source."),
  )
  return `${out.join('\n')}\n`
}

/** Every page: file name to text, sorted by name. */
export function manPages(config) {
  const commands = visibleCommands(config)
  const common = commonFlags(commands)
  const version = config.pjson.version
  const pages = new Map([['placemat.1', mainPage({config, commands, common, version})]])
  for (const command of commands) pages.set(`${pageName(command.id)}.1`, commandPage(command, {commands, common, version}))
  return new Map([...pages].sort(([a], [b]) => (a < b ? -1 : 1)))
}

/** What package.json's man list must be for these pages. */
const manList = (pages) => [...pages.keys()].map((f) => `./${MAN}/${f}`)

function writeDir(pages) {
  const target = path.join(root, MAN)
  // Written beside it and moved in place, so a reader meanwhile finds the old pages or the new, never half.
  const tmp = path.join(root, `.${MAN}-${process.pid}`)
  const old = path.join(root, `.${MAN}-${process.pid}.old`)
  try {
    fs.mkdirSync(tmp)
    for (const [file, text] of pages) fs.writeFileSync(path.join(tmp, file), text)
    if (fs.existsSync(target)) fs.renameSync(target, old)
    fs.renameSync(tmp, target)
  } finally {
    fs.rmSync(tmp, {recursive: true, force: true})
    fs.rmSync(old, {recursive: true, force: true})
  }
}

const pjsonFile = path.join(root, 'package.json')
const listed = () => JSON.parse(fs.readFileSync(pjsonFile, 'utf8')).man ?? []
const sameList = (a, b) => a.length === b.length && a.every((x, i) => x === b[i])

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const options = ['--check', '--package-json']
  const unknown = process.argv.slice(2).filter((a) => !options.includes(a))
  if (unknown.length) {
    console.error(`man-pages: unknown argument ${unknown[0]} (usage: node scripts/man-pages.mjs [--check | --package-json])`)
    process.exit(2)
  }
  const stale = staleBuild(root)
  if (stale === 'oclif.manifest.json is missing') {
    console.error('man-pages: oclif.manifest.json is missing: run npm run build first (it writes the man pages too)')
    process.exit(2)
  }
  if (stale) console.error(`man-pages: warning: ${stale}: the help read here may be old (npm run build)`)

  const pages = manPages(await loadConfig(root))
  const want = manList(pages)
  if (process.argv.includes('--check')) {
    const problems = []
    for (const [file, text] of pages) {
      const current = fs.existsSync(path.join(root, MAN, file)) ? fs.readFileSync(path.join(root, MAN, file), 'utf8') : undefined
      if (current !== text) problems.push(`${MAN}/${file} is not what the help says`)
    }
    const extra = fs.existsSync(path.join(root, MAN)) ? fs.readdirSync(path.join(root, MAN)).filter((f) => !pages.has(f)) : []
    for (const f of extra) problems.push(`${MAN}/${f} is no command's page`)
    if (!sameList(listed(), want)) problems.push("package.json's man list is not the pages (node scripts/man-pages.mjs --package-json)")
    for (const p of problems) console.error(`man-pages: ${p}`)
    process.exit(problems.length ? 1 : 0)
  }
  writeDir(pages)
  if (process.argv.includes('--package-json') && !sameList(listed(), want)) {
    const pjson = JSON.parse(fs.readFileSync(pjsonFile, 'utf8'))
    pjson.man = want
    fs.writeFileSync(pjsonFile, `${JSON.stringify(pjson, null, 2)}\n`)
    console.log("man-pages: wrote package.json's man list")
  } else if (!sameList(listed(), want))
    console.error(
      "man-pages: warning: package.json's man list is not the pages (npm would not link them all): node scripts/man-pages.mjs --package-json",
    )
}
