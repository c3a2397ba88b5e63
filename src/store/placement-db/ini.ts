/**
 * oslo.config's INI, as OpenStack's placement.conf is written: read by the daemon for its own
 * settings (daemon/config-file.ts) and here for `[placement_database] connection`.
 */

export class ConfigFileError extends Error {}

/** oslo.config's INI: [section], key = value (or key: value), # and ; comments, indented continuation lines. */
export function parseIni(text: string, file = 'config'): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>()
  let section: Map<string, string> | undefined
  let last: string | undefined
  text.split(/\r?\n/).forEach((raw, i) => {
    if (/^\s*([#;].*)?$/.test(raw)) return
    if (/^\s/.test(raw) && section && last !== undefined) {
      section.set(last, `${section.get(last)}\n${raw.trim()}`)
      return
    }
    const header = /^\[([^\]]+)\]\s*$/.exec(raw)
    if (header) {
      const name = header[1].trim()
      section = out.get(name) ?? new Map()
      out.set(name, section)
      last = undefined
      return
    }
    const kv = /^([^=:\s][^=:]*?)\s*[=:]\s*(.*)$/.exec(raw)
    if (!kv || !section) throw new ConfigFileError(`${file}:${i + 1}: expected [section] or key = value, not '${raw.trim()}'`)
    last = kv[1].trim()
    section.set(last, kv[2].trim())
  })
  return out
}
