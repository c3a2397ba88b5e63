#!/usr/bin/env node
// docs/commands.md, the command reference, written from each command's help: its summary,
// usage, arguments, flags (descriptions, defaults, choices) and examples, as the built CLI holds
// them (oclif.manifest.json, made by `npm run build`, read through @oclif/core's Config as
// `placemat help` reads it). The guides in docs/ link to its sections and explain the concepts;
// what a flag does is written once, in its command.
//
//   node scripts/command-reference.mjs           write docs/commands.md
//   node scripts/command-reference.mjs --check   exit 1 when docs/commands.md is not what the help says
//
// The output depends on the commands alone: sorted by command, no paths, no terminal width, and
// none of the defaults help works out when it is shown (the environment's database file).
import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {Config} from '@oclif/core'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const target = path.join(root, 'docs', 'commands.md')
const manifest = path.join(root, 'oclif.manifest.json')

/** Flag groups nearly every command takes: described once at the top, named in each command. */
const COMMON = [
  {group: 'CONNECTION', title: 'Connection flags', what: 'what the command talks to'},
  {group: 'OPENSTACK', title: 'OpenStack flags', what: "logging in to a cloud's Keystone"},
  {group: 'OUTPUT', title: 'Output flags', what: 'how the answer is printed'},
]

/** GitHub's anchor for a heading: lower case, spaces to dashes, punctuation dropped. */
const anchor = (heading) =>
  heading
    .toLowerCase()
    .replace(/[^a-z0-9 _-]/g, '')
    .replace(/ /g, '-')

const commandName = (id) => `placemat ${id.split(':').join(' ')}`

/** Text for a table cell: one line, no column breaks, no HTML, no emphasis by accident. */
function cell(text) {
  return String(text)
    .replace(/\s*\n\s*/g, ' ')
    .replace(/\\/g, '\\\\')
    .replace(/\|/g, '\\|')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\*/g, '\\*')
    .replace(/(^|[^A-Za-z0-9_`])_/g, '$1\\_')
    .replace(/_(?=$|[^A-Za-z0-9_])/g, '\\_')
}

const code = (text) => `\`${String(text).replace(/\|/g, '\\|')}\``

/** How the flag is written: `-f, --format <value>`, `--[no-]enforce-scope`. */
function flagSyntax(flag) {
  const name = flag.type === 'boolean' && flag.allowNo ? `--[no-]${flag.name}` : `--${flag.name}`
  const value = flag.type === 'option' ? ` ${flag.helpValue ?? '<value>'}` : ''
  return `${flag.char ? `-${flag.char}, ` : ''}${name}${value}`
}

/** The flag's description, then what its definition adds: required, repeatable, choices, default, relations. */
function flagText(flag) {
  const notes = []
  if (flag.required) notes.push('Required.')
  if (flag.multiple && !/repeatable/i.test(flag.description ?? '')) notes.push('Repeatable.')
  if (flag.options?.length) notes.push(`One of: ${flag.options.map(code).join(', ')}.`)
  if (flag.default !== undefined && flag.default !== false && !(Array.isArray(flag.default) && !flag.default.length))
    notes.push(`Default: ${code(Array.isArray(flag.default) ? flag.default.join(',') : flag.default)}.`)
  if (flag.dependsOn?.length) notes.push(`Needs ${flag.dependsOn.map((f) => code(`--${f}`)).join(', ')}.`)
  if (flag.exclusive?.length) notes.push(`Not with ${flag.exclusive.map((f) => code(`--${f}`)).join(', ')}.`)
  const description = flag.description ? cell(flag.description) : ''
  return [description && !description.endsWith('.') ? `${description}.` : description, ...notes].filter(Boolean).join(' ')
}

/** What makes two definitions of a flag the same for the reader. */
const signature = (flag) =>
  JSON.stringify([
    flag.char,
    flag.type,
    flag.allowNo,
    flag.helpValue,
    flag.description,
    flag.required,
    flag.multiple,
    flag.options,
    flag.default,
    flag.dependsOn,
    flag.exclusive,
  ])

/** The definition of each common flag that most commands share; a command that differs lists its own. */
function commonFlags(commands) {
  const common = new Map()
  for (const {group} of COMMON) {
    const seen = new Map()
    for (const command of commands)
      for (const flag of Object.values(command.flags))
        if (flag.helpGroup === group) {
          const key = `${flag.name}\0${signature(flag)}`
          const entry = seen.get(key) ?? {flag, count: 0}
          entry.count++
          seen.set(key, entry)
        }
    for (const {flag, count} of seen.values()) {
      const best = common.get(flag.name)
      if (!best || count > best.count || (count === best.count && signature(flag) < signature(best.flag)))
        common.set(flag.name, {flag, count, group})
    }
  }
  return common
}

const isCommon = (common, flag) => {
  const entry = common.get(flag.name)
  return entry !== undefined && entry.group === flag.helpGroup && signature(entry.flag) === signature(flag)
}

function usage(command) {
  const words = [commandName(command.id)]
  const args = Object.values(command.args ?? {})
  args.forEach((arg, i) => {
    const name = arg.name.toUpperCase() + (command.strict === false && i === args.length - 1 ? '...' : '')
    words.push(arg.required ? name : `[${name}]`)
  })
  for (const flag of Object.values(command.flags)) if (flag.required) words.push(flagSyntax(flag))
  if (Object.values(command.flags).some((f) => !f.required)) words.push('[FLAGS]')
  return words.join(' ')
}

function example(command, e) {
  const render = (s) => s.replace(/<%=\s*config\.bin\s*%>/g, 'placemat').replace(/<%=\s*command\.id\s*%>/g, command.id.split(':').join(' '))
  const text = typeof e === 'string' ? render(e) : `# ${render(e.description)}\n${render(e.command)}`
  if (text.includes('<%')) throw new Error(`${command.id}: an example holds a template this script does not know: ${text}`)
  return text
}

function table(rows, header) {
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)]
}

function render(config) {
  const commands = config.commands
    .filter((c) => c.pluginName === config.pjson.name && !c.hidden)
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  const common = commonFlags(commands)
  const out = []
  const line = (...l) => out.push(...l)

  line(
    "<!-- Written by scripts/command-reference.mjs from the commands' help (npm run docs); do not edit by hand. -->",
    '',
    '# Command reference',
    '',
    'Every `placemat` command, as its help (`placemat COMMAND --help`) gives it: what it does, how it is',
    'called, its arguments and flags, and examples. The guides ([docs/README.md](README.md)) say how the',
    'commands work together; exit codes are in the [README](../README.md#exit-codes).',
    '',
    '## Topics',
    '',
  )
  const topics = config.topics.filter((t) => !t.hidden && commands.some((c) => c.id.startsWith(`${t.name}:`)))
  topics.sort((a, b) => (a.name < b.name ? -1 : 1))
  line(
    ...table(
      topics.map((t) => {
        const first = commands.find((c) => c.id.startsWith(`${t.name}:`))
        return [`[${t.name.split(':').join(' ')}](#${anchor(commandName(first.id))})`, cell(t.description ?? '')]
      }),
      ['topic', 'commands for'],
    ),
    '',
    '## Commands',
    '',
    ...commands.map((c) => `- [${commandName(c.id)}](#${anchor(commandName(c.id))}): ${cell(c.summary ?? '')}`),
    '',
  )

  for (const {group, title, what} of COMMON) {
    const flags = [...common.values()].filter((e) => e.group === group).map((e) => e.flag)
    line(`## ${title}`, '', `The flags of ${what}, the same in every command that takes them (each command names those it takes).`, '')
    line(
      ...table(
        flags.map((f) => [code(flagSyntax(f)), flagText(f)]),
        ['flag', 'description'],
      ),
      '',
    )
  }

  for (const command of commands) {
    const heading = commandName(command.id)
    line(`## ${heading}`, '')
    if (command.summary) line(cell(command.summary), '')
    line('```', usage(command), '```', '')
    const args = Object.values(command.args ?? {})
    if (args.length) {
      line('**Arguments**', '')
      line(
        ...table(
          args.map((a) => [
            code(a.name.toUpperCase()),
            [cell(a.description ?? ''), a.required ? '' : 'Optional.'].filter(Boolean).join(' '),
          ]),
          ['argument', 'description'],
        ),
        '',
      )
    }
    const flags = Object.values(command.flags).filter((f) => !isCommon(common, f))
    const groups = [...new Set(flags.map((f) => f.helpGroup ?? ''))].sort((a, b) => (a === '' ? -1 : b === '' ? 1 : 0))
    for (const group of groups) {
      const title = group ? `${group[0]}${group.slice(1).toLowerCase()} flags` : 'Flags'
      line(`**${title}**`, '')
      line(
        ...table(
          flags.filter((f) => (f.helpGroup ?? '') === group).map((f) => [code(flagSyntax(f)), flagText(f)]),
          ['flag', 'description'],
        ),
        '',
      )
    }
    const shared = COMMON.map(({group, title}) => {
      const names = Object.values(command.flags)
        .filter((f) => f.helpGroup === group && isCommon(common, f))
        .map((f) => code(f.char ? `-${f.char}` : `--${f.name}`))
      return names.length ? `[${title.replace(/ flags$/, '').toLowerCase()}](#${anchor(title)}) ${names.join(' ')}` : undefined
    }).filter(Boolean)
    if (shared.length) line(`Also takes: ${shared.join('; ')}.`, '')
    if (command.description) line('```text', command.description.trim(), '```', '')
    if (command.examples?.length) line('**Examples**', '', '```sh', ...command.examples.map((e) => example(command, e)), '```', '')
  }
  return `${out.join('\n').trimEnd()}\n`
}

function staleBuild() {
  const built = fs.statSync(manifest, {throwIfNoEntry: false})?.mtimeMs
  if (built === undefined) return 'oclif.manifest.json is missing'
  const newer = []
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, {withFileTypes: true})) {
      const file = path.join(dir, e.name)
      if (e.isDirectory()) walk(file)
      else if (/\.tsx?$/.test(e.name) && fs.statSync(file).mtimeMs > built) newer.push(path.relative(root, file))
    }
  }
  walk(path.join(root, 'commands'))
  return newer.length
    ? `oclif.manifest.json is older than ${newer.sort()[0]}${newer.length > 1 ? ` and ${newer.length - 1} more` : ''}`
    : undefined
}

const check = process.argv.includes('--check')
const unknown = process.argv.slice(2).filter((a) => a !== '--check')
if (unknown.length) {
  console.error(`command-reference: unknown argument ${unknown[0]} (usage: node scripts/command-reference.mjs [--check])`)
  process.exit(2)
}
const stale = staleBuild()
if (stale === 'oclif.manifest.json is missing') {
  console.error('command-reference: oclif.manifest.json is missing: run npm run build first (npm run docs does both)')
  process.exit(2)
}
if (stale) console.error(`command-reference: warning: ${stale}: the help read here may be old (npm run build)`)

const text = render(await Config.load({root}))
if (check) {
  const current = fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : undefined
  if (current === text) process.exit(0)
  const a = (current ?? '').split('\n')
  const b = text.split('\n')
  let i = 0
  while (i < a.length && i < b.length && a[i] === b[i]) i++
  console.error(
    current === undefined
      ? 'docs/commands.md is missing: run npm run docs'
      : `docs/commands.md is stale: run npm run docs\n  first difference at line ${i + 1}:\n  - ${a[i] ?? '(end of file)'}\n  + ${b[i] ?? '(end of file)'}`,
  )
  process.exit(1)
}
fs.mkdirSync(path.dirname(target), {recursive: true})
fs.writeFileSync(target, text)
console.log(`command-reference: wrote docs/commands.md (${text.split('\n').length - 1} lines)`)
