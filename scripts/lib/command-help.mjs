// The commands' help as the generated documentation reads it: the visible commands and topics of
// the built CLI (oclif.manifest.json, made by `npm run build`, read through @oclif/core's Config as
// `placemat help` reads it), the flag groups nearly every command shares, how a flag is written and
// what its definition adds to its description, a command's usage line and its examples. Free of
// any output format: scripts/command-reference.mjs renders it as Markdown (docs/commands.md),
// scripts/man-pages.mjs as roff (man/). Where text is formatted, the caller passes how: `text` for
// help prose, `literal` for what is typed as it stands (a choice, a default, a flag's name).
//
// Nothing here depends on the machine: the commands are sorted, and none of the defaults help works
// out when it is shown (the environment's database file) is read.
import fs from 'node:fs'
import path from 'node:path'
import {Config} from '@oclif/core'

/** Flag groups nearly every command takes: described once, named in each command. */
export const COMMON = [
  {group: 'CONNECTION', title: 'Connection flags', what: 'what the command talks to'},
  {group: 'OPENSTACK', title: 'OpenStack flags', what: "logging in to a cloud's Keystone"},
  {group: 'OUTPUT', title: 'Output flags', what: 'how the answer is printed'},
]

export const commandName = (id) => `placemat ${id.split(':').join(' ')}`

const byId = (a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/** The commands of the package itself (not its plugins'), hidden ones left out, sorted by id. */
export const visibleCommands = (config) => config.commands.filter((c) => c.pluginName === config.pjson.name && !c.hidden).sort(byId)

/** The topics that hold a visible command, sorted by name, each with its commands. */
export function visibleTopics(config, commands) {
  return config.topics
    .filter((t) => !t.hidden)
    .map((t) => ({name: t.name, description: t.description, commands: commands.filter((c) => c.id.startsWith(`${t.name}:`))}))
    .filter((t) => t.commands.length)
    .sort((a, b) => (a.name < b.name ? -1 : 1))
}

/** How the flag is written: `-f, --format <value>`, `--[no-]enforce-scope`. */
export function flagSyntax(flag) {
  const name = flag.type === 'boolean' && flag.allowNo ? `--[no-]${flag.name}` : `--${flag.name}`
  const value = flag.type === 'option' ? ` ${flag.helpValue ?? '<value>'}` : ''
  return `${flag.char ? `-${flag.char}, ` : ''}${name}${value}`
}

/** The shortest way the flag is named: `-f`, else `--format`. */
export const flagName = (flag) => (flag.char ? `-${flag.char}` : `--${flag.name}`)

/** What the flag's definition adds to its description: required, repeatable, choices, default, relations. */
export function flagNotes(flag, literal) {
  const notes = []
  if (flag.required) notes.push('Required.')
  if (flag.multiple && !/repeatable/i.test(flag.description ?? '')) notes.push('Repeatable.')
  if (flag.options?.length) notes.push(`One of: ${flag.options.map(literal).join(', ')}.`)
  if (flag.default !== undefined && flag.default !== false && !(Array.isArray(flag.default) && !flag.default.length))
    notes.push(`Default: ${literal(Array.isArray(flag.default) ? flag.default.join(',') : flag.default)}.`)
  if (flag.dependsOn?.length) notes.push(`Needs ${flag.dependsOn.map((f) => literal(`--${f}`)).join(', ')}.`)
  if (flag.exclusive?.length) notes.push(`Not with ${flag.exclusive.map((f) => literal(`--${f}`)).join(', ')}.`)
  return notes
}

/** The flag's description as a sentence, then its notes; `text` formats the description. */
export function flagText(flag, {text, literal}) {
  const description = flag.description ? text(flag.description) : ''
  return [description && !description.endsWith('.') ? `${description}.` : description, ...flagNotes(flag, literal)]
    .filter(Boolean)
    .join(' ')
}

/** An argument's description, and whether it may be left out. */
export const argText = (arg, text) => [text(arg.description ?? ''), arg.required ? '' : 'Optional.'].filter(Boolean).join(' ')

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
export function commonFlags(commands) {
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

export const isCommon = (common, flag) => {
  const entry = common.get(flag.name)
  return entry !== undefined && entry.group === flag.helpGroup && signature(entry.flag) === signature(flag)
}

/** The common groups, each with its flags as most commands define them. */
export const commonGroups = (common) =>
  COMMON.map((g) => ({...g, flags: [...common.values()].filter((e) => e.group === g.group).map((e) => e.flag)}))

/** A command's own flags (those not common), by help group: its ungrouped flags first, titled `Flags`. */
export function ownFlagGroups(common, command) {
  const flags = Object.values(command.flags).filter((f) => !isCommon(common, f))
  const groups = [...new Set(flags.map((f) => f.helpGroup ?? ''))].sort((a, b) => (a === '' ? -1 : b === '' ? 1 : 0))
  return groups.map((group) => ({
    group,
    title: group ? `${group[0]}${group.slice(1).toLowerCase()} flags` : 'Flags',
    flags: flags.filter((f) => (f.helpGroup ?? '') === group),
  }))
}

/** The common groups a command takes, each with the common flags it takes of it. */
export function sharedGroups(common, command) {
  return COMMON.map((g) => ({
    ...g,
    flags: Object.values(command.flags).filter((f) => f.helpGroup === g.group && isCommon(common, f)),
  })).filter((g) => g.flags.length)
}

/** The usage line's words: the command, its arguments, its required flags, and [FLAGS] when it has others. */
export function usageWords(command) {
  const words = [commandName(command.id)]
  const args = Object.values(command.args ?? {})
  args.forEach((arg, i) => {
    const name = arg.name.toUpperCase() + (command.strict === false && i === args.length - 1 ? '...' : '')
    words.push(arg.required ? name : `[${name}]`)
  })
  for (const flag of Object.values(command.flags)) if (flag.required) words.push(flagSyntax(flag))
  if (Object.values(command.flags).some((f) => !f.required)) words.push('[FLAGS]')
  return words
}

export const usage = (command) => usageWords(command).join(' ')

/** An example with its templates filled in; one with a description is `# description` and the command. */
export function example(command, e) {
  const render = (s) => s.replace(/<%=\s*config\.bin\s*%>/g, 'placemat').replace(/<%=\s*command\.id\s*%>/g, command.id.split(':').join(' '))
  const text = typeof e === 'string' ? render(e) : `# ${render(e.description)}\n${render(e.command)}`
  if (text.includes('<%')) throw new Error(`${command.id}: an example holds a template this script does not know: ${text}`)
  return text
}

/** Why the help in oclif.manifest.json may be old (missing, or older than a command's source), or undefined. */
export function staleBuild(root) {
  const built = fs.statSync(path.join(root, 'oclif.manifest.json'), {throwIfNoEntry: false})?.mtimeMs
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

/** The built CLI's configuration, as `placemat help` loads it. */
export const loadConfig = (root) => Config.load({root})
