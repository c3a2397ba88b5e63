// Markdown tables, as the benchmarks and the fault run print them.

/** The lines of a Markdown table: the header, its rule, a line a row (each row an array of cells). */
export function markdownTable(header, rows) {
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)]
}

/** Prints a Markdown table, a line at a time. */
export function printTable(header, rows, log = console.log) {
  for (const line of markdownTable(header, rows)) log(line)
}
