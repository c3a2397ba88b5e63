// Text as roff for man pages (man(7) macros): escaped so that groff and mandoc print it as it was
// written, and the commands' help text laid out as paragraphs, lists and blocks kept as written.
//
// Escaped: a backslash is \e; every hyphen-minus is \- (what is typed, --flags above all, must
// copy and paste as the ASCII character, never a typographic hyphen); quotes and backquotes are
// \(aq and \(ga (never curly); characters outside ASCII are named (\(em) or given by code point
// (\[u2019]), so a page needs no input encoding; and a line that would start with a control
// character (. or ') starts with \& instead.

const NAMED = {
  '\u2014': '\\(em',
  '\u2013': '\\(en',
  '\u2018': '\\(oq',
  '\u2019': '\\(cq',
  '\u201c': '\\(lq',
  '\u201d': '\\(rq',
  '\u00d7': '\\(mu',
}

/** Text escaped for roff, on one line or several (the caller places the lines). */
export function esc(text) {
  return String(text)
    .replace(/\\/g, '\\e')
    .replace(/-/g, '\\-')
    .replace(/'/g, '\\(aq')
    .replace(/`/g, '\\(ga')
    .replace(/[^\n\x20-\x7e]/gu, (c) => NAMED[c] ?? `\\[u${c.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}]`)
}

/** A source line that does not start with a control character. */
export const guard = (line) => (/^[.']/.test(line) ? `\\&${line}` : line)

/** In bold, never hyphenated (a flag, a command, a page's name: what is typed). */
export const bold = (text) => `\\fB\\%${esc(text)}\\fR`
export const italic = (text) => `\\fI${esc(text)}\\fR`

/** Help text on one line: a `code span` in bold, the rest escaped. */
export const inline = (text) =>
  String(text)
    .replace(/\s*\n\s*/g, ' ')
    .split(/`([^`]+)`/)
    .map((part, i) => (i % 2 ? bold(part) : esc(part)))
    .join('')

/** One source line of text, its spaces kept (for no-fill blocks). */
export const textLine = (text) => guard(inline(text))

/** A macro call; each argument quoted when it has a space or is empty. */
export const macro = (name, ...args) =>
  [`.${name}`, ...args.map((a) => (a === '' || /\s/.test(a) ? `"${a.replace(/"/g, '\\(dq')}"` : a))].join(' ')

/**
 * A block printed as it stands, indented: no filling, its own spaces kept. (.nf/.fi rather than
 * groff's .EX/.EE, whose end turns hyphenation back on in a page that turned it off.)
 */
export const example = (text) => [
  '.RS 4',
  '.nf',
  ...String(text)
    .split('\n')
    .map((l) => guard(esc(l))),
  '.fi',
  '.RE',
]

/**
 * A command's help text as roff. Its paragraphs (blank-line separated) are filled; a line starting
 * `- ` or `1. ` is a list item, the lines indented as far as its text carry it on; any other
 * indented line is kept as written (tables of columns, YAML), in a no-fill block.
 */
export function prose(text) {
  const out = []
  for (const paragraph of String(text)
    .trim()
    .split(/\n[ \t]*\n/)) {
    out.push('.PP')
    let mode = 'text'
    let indented = false
    let itemIndent = 0
    // The items of a list after the first follow with no blank line between (.PD 0), until it ends.
    let compact = false
    const endList = () => {
      if (compact) out.push('.PD')
      compact = false
    }
    for (const line of paragraph.split('\n')) {
      const item = /^(- |\d+\. )(.*)$/.exec(line)
      const lead = /^ */.exec(line)[0].length
      if (mode === 'pre' && (item || lead === 0 || (indented && lead === itemIndent))) out.push('.fi')
      if (item) {
        if (mode === 'item' && !compact) out.push('.PD 0')
        compact ||= mode === 'item'
        out.push(item[1] === '- ' ? '.IP \\(bu 2' : macro('IP', item[1].trim(), String(item[1].length)))
        out.push(textLine(item[2]))
        mode = 'item'
        indented = true
        itemIndent = item[1].length
      } else if (lead > 0 && indented && lead === itemIndent) {
        out.push(textLine(line.trim()))
        mode = 'item'
      } else if (lead > 0) {
        endList()
        if (mode !== 'pre') out.push('.nf')
        out.push(guard(esc(line)))
        mode = 'pre'
      } else {
        endList()
        if (indented) out.push('.PP')
        indented = false
        out.push(textLine(line))
        mode = 'text'
      }
    }
    if (mode === 'pre') out.push('.fi')
    endList()
  }
  return out
}
