#!/usr/bin/env node
// docs/commands.md, the command reference, written from each command's help: its summary,
// usage, arguments, flags (descriptions, defaults, choices) and examples, as the built CLI holds
// them (scripts/lib/command-help.mjs reads them; this script only writes the Markdown). The guides
// in docs/ link to its sections and explain the concepts; what a flag does is written once, in its
// command. The man pages (scripts/man-pages.mjs) are written from the same help.
//
//   node scripts/command-reference.mjs           write docs/commands.md
//   node scripts/command-reference.mjs --check   exit 1 when docs/commands.md is not what the help says
//
// The output depends on the commands alone: sorted by command, no paths, no terminal width, and
// none of the defaults help works out when it is shown (the environment's database file).
import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {
  argText,
  commandName,
  commonFlags,
  commonGroups,
  example,
  flagName,
  flagSyntax,
  flagText,
  loadConfig,
  ownFlagGroups,
  sharedGroups,
  staleBuild,
  usage,
  visibleCommands,
  visibleTopics,
} from './lib/command-help.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const target = path.join(root, 'docs', 'commands.md')

/** GitHub's anchor for a heading: lower case, spaces to dashes, punctuation dropped. */
const anchor = (heading) =>
  heading
    .toLowerCase()
    .replace(/[^a-z0-9 _-]/g, '')
    .replace(/ /g, '-')

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

const markdown = {text: cell, literal: code}

function table(rows, header) {
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)]
}

function render(config) {
  const commands = visibleCommands(config)
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
  line(
    ...table(
      visibleTopics(config, commands).map((t) => [
        `[${t.name.split(':').join(' ')}](#${anchor(commandName(t.commands[0].id))})`,
        cell(t.description ?? ''),
      ]),
      ['topic', 'commands for'],
    ),
    '',
    '## Commands',
    '',
    ...commands.map((c) => `- [${commandName(c.id)}](#${anchor(commandName(c.id))}): ${cell(c.summary ?? '')}`),
    '',
  )

  for (const {title, what, flags} of commonGroups(common)) {
    line(`## ${title}`, '', `The flags of ${what}, the same in every command that takes them (each command names those it takes).`, '')
    line(
      ...table(
        flags.map((f) => [code(flagSyntax(f)), flagText(f, markdown)]),
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
          args.map((a) => [code(a.name.toUpperCase()), argText(a, cell)]),
          ['argument', 'description'],
        ),
        '',
      )
    }
    for (const {title, flags} of ownFlagGroups(common, command)) {
      line(`**${title}**`, '')
      line(
        ...table(
          flags.map((f) => [code(flagSyntax(f)), flagText(f, markdown)]),
          ['flag', 'description'],
        ),
        '',
      )
    }
    const shared = sharedGroups(common, command).map(
      ({title, flags}) =>
        `[${title.replace(/ flags$/, '').toLowerCase()}](#${anchor(title)}) ${flags.map((f) => code(flagName(f))).join(' ')}`,
    )
    if (shared.length) line(`Also takes: ${shared.join('; ')}.`, '')
    if (command.description) line('```text', command.description.trim(), '```', '')
    if (command.examples?.length) line('**Examples**', '', '```sh', ...command.examples.map((e) => example(command, e)), '```', '')
  }
  return `${out.join('\n').trimEnd()}\n`
}

const check = process.argv.includes('--check')
const unknown = process.argv.slice(2).filter((a) => a !== '--check')
if (unknown.length) {
  console.error(`command-reference: unknown argument ${unknown[0]} (usage: node scripts/command-reference.mjs [--check])`)
  process.exit(2)
}
const stale = staleBuild(root)
if (stale === 'oclif.manifest.json is missing') {
  console.error('command-reference: oclif.manifest.json is missing: run npm run build first (npm run docs does both)')
  process.exit(2)
}
if (stale) console.error(`command-reference: warning: ${stale}: the help read here may be old (npm run build)`)

const text = render(await loadConfig(root))
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
