/**
 * placemat's help screens: descriptions re-flowed so that a help screen never breaks a
 * hand-wrapped line in the middle (a paragraph is one line for the help to wrap; indented
 * lines, lists and examples stay as written), and a topic's help ends with the examples of
 * its commands.
 */
import {CommandHelp, Help, type Command, type Interfaces} from '@oclif/core'
import {ExitCode} from './failure.js'
import {closestCommands, typedCommand} from './hooks/command-not-found.js'

/** Joins the lines of each prose paragraph; keeps indented, list and table lines as they are. */
export function reflow(text: string): string {
  const out: string[] = []
  const kept = (l: string) => /^(\s|[-*|$]|\d+\.\s)/.test(l) || l.trim() === ''
  for (const line of text.split('\n')) {
    const prev = out.length ? out[out.length - 1] : undefined
    if (prev !== undefined && !kept(line) && !kept(prev) && !prev.endsWith(':')) out[out.length - 1] = `${prev} ${line.trim()}`
    else out.push(line)
  }
  return out.join('\n')
}

/**
 * A command's help whose description is wrapped line by line, so that an indented line keeps
 * its indentation, and its continuation lines too: oclif's own wrap trims every line, which
 * flattens an example (a YAML one then no longer parses). The other sections wrap as oclif's.
 */
export class PlacematCommandHelp extends CommandHelp {
  private keepIndent = false

  /** What the command does before its flags: the shared ones (connection, output) run to some 35 lines. */
  protected sections(): ReturnType<CommandHelp['sections']> {
    const all = super.sections()
    const description = all.findIndex((s) => s.header === 'DESCRIPTION')
    const usage = all.findIndex((s) => s.header === (this.opts.usageHeader || 'USAGE'))
    if (description < 0 || usage < 0 || description < usage) return all
    const [moved] = all.splice(description, 1)
    all.splice(usage + 1, 0, moved)
    return all
  }

  protected description(): string | undefined {
    this.keepIndent = true
    try {
      return super.description()
    } finally {
      this.keepIndent = false
    }
  }

  wrap(body: string, spacing = this.indentSpacing): string {
    if (!this.keepIndent) return super.wrap(body, spacing)
    return body
      .split('\n')
      .map((line) => {
        const indent = /^[ \t]*/.exec(line)![0]
        if (!indent || !line.trim()) return super.wrap(line, spacing)
        return super
          .wrap(line.slice(indent.length), spacing + indent.length)
          .split('\n')
          .map((l) => indent + l)
          .join('\n')
      })
      .join('\n')
  }
}

/**
 * The command with the defaults its flags work out when help is shown (a `defaultHelp`
 * function, such as the environment's database file): the manifest, made when the CLI is
 * built, cannot hold them, and the bundle's command table holds stand-ins without flags, so
 * they are read from the real class.
 */
async function withDynamicDefaults(command: Command.Loadable): Promise<Command.Loadable> {
  const loaded = (await command.load()) as Command.Class & {real?: () => Promise<Command.Class>}
  const real = loaded.real ? await loaded.real() : loaded
  const flags = {...command.flags}
  for (const [name, flag] of Object.entries(real.flags ?? {})) {
    const defaultHelp = (flag as {defaultHelp?: unknown}).defaultHelp
    if (typeof defaultHelp !== 'function' || !flags[name]) continue
    flags[name] = {...flags[name], default: await defaultHelp({flags: {}, options: flag})} as (typeof flags)[string]
  }
  return {...command, flags}
}

export default class PlacematHelp extends Help {
  protected CommandHelpClass = PlacematCommandHelp

  /** `help NOPE`: said as placemat says a command it lacks (oclif's own error has its own format), exit 2. */
  async showHelp(argv: string[]): Promise<void> {
    // The words before the first flag; a command's own arguments may follow its name (`provider show cn1 --help`).
    const first = argv.findIndex((a) => a.startsWith('-'))
    const words = first < 0 ? argv : argv.slice(0, first)
    // A command (its arguments may follow), or a topic named whole.
    const command = (n: number) => this.config.findCommand(words.slice(0, n).join(':')) !== undefined
    if (!words.length || words.some((_, k) => command(k + 1)) || this.config.findTopic(words.join(':'))) return super.showHelp(argv)
    const ids = this.config.commands.filter((c) => !c.hidden).map((c) => c.id)
    const typed = words.join(' ')
    const near = closestCommands(typed, [...ids, ...this.config.topics.map((t) => t.name)])
    const bin = this.config.bin
    const hint = near.length ? `; did you mean \`${bin} help ${near[0]}\`?` : `; \`${bin} help\` lists them`
    process.stderr.write(`${bin}: no command or topic ${typedCommand(typed, ids)}${hint}\n`)
    process.exit(ExitCode.USAGE)
  }

  async showCommandHelp(command: Command.Loadable): Promise<void> {
    const shown = command.hasDynamicHelp ? await withDynamicDefaults(command) : command
    return super.showCommandHelp({...shown, description: shown.description && reflow(shown.description)} as Command.Loadable)
  }

  protected async showTopicHelp(topic: Interfaces.Topic): Promise<void> {
    // Before the topic's own help: it rewrites command ids ("rack:add" -> "rack add") as it lists them.
    const depth = topic.name.split(':').length + 1
    const commands = this.sortedCommands.filter((c) => c.id.startsWith(`${topic.name}:`) && c.id.split(':').length === depth)
    const examples = commands.flatMap((c) => (c.examples ?? []).map((e) => (typeof e === 'string' ? e : e.command)))
    await super.showTopicHelp(topic)
    if (!examples.length) return
    this.log('EXAMPLES')
    for (const e of examples) this.log(`  $ ${this.render(e)}`)
    this.log('')
  }
}
