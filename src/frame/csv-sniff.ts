// What a CSV file leaves unsaid, guessed as DuckDB's sniffer and Python's
// csv.Sniffer guess it. Real files come delimited by ';' (spreadsheets in
// much of Europe), tabs (.tsv) and '|' as often as by ','; read with ',',
// such a file is one text column and every figure in it silently lost. And
// real headers repeat a name ("value", "value"), which leaves col('value')
// meaning two columns: the later ones are renamed as DuckDB renames them.

import * as fs from 'node:fs'
import { compressionOfName } from '../native/file-codecs'

const CANDIDATES = [',', '\t', ';', '|']
const SNIFF_BYTES = 64 * 1024
const SNIFF_RECORDS = 30

/** The fields of each whole record of `text` cut by `delim` outside `quote`d values (the last, maybe cut short, left out). */
function fieldCounts(text: string, delim: string, quote: string): number[] {
  const counts: number[] = []
  let fields = 1
  let inQuote = false
  let content = false
  for (let i = 0; i < text.length && counts.length < SNIFF_RECORDS; i++) {
    const c = text[i]
    if (c === quote) inQuote = !inQuote
    else if (!inQuote && (c === '\n' || c === '\r')) {
      if (content) counts.push(fields)
      fields = 1
      content = false
      continue
    } else if (!inQuote && c === delim) fields++
    content = true
  }
  return counts
}

/**
 * The delimiter of `path`: the candidate that cuts its first records into
 * the same number of fields, more than one, the most fields winning; ','
 * where none does (one column, an empty or compressed file), or a tab for a
 * file named .tsv or .tab.
 */
export function sniffDelimiter(path: string, quote: string): string {
  const fallback = /\.(tsv|tab)$/i.test(path) ? '\t' : ','
  if (compressionOfName(path)) return fallback
  let text: string
  try {
    const fd = fs.openSync(path, 'r')
    try {
      const buf = Buffer.alloc(SNIFF_BYTES)
      text = buf.subarray(0, fs.readSync(fd, buf, 0, SNIFF_BYTES, 0)).toString('utf8')
    } finally {
      fs.closeSync(fd)
    }
  } catch {
    return fallback
  }
  let best = { delim: fallback, fields: 1 }
  for (const delim of CANDIDATES) {
    const counts = fieldCounts(text, delim, quote)
    if (counts.length === 0 || counts[0] < 2 || !counts.every((n) => n === counts[0])) continue
    if (counts[0] > best.fields) best = { delim, fields: counts[0] }
  }
  return best.delim
}

/** Header names with each repeat renamed `name_1`, `name_2`… (skipping names already taken) and each empty one `column<i>`, as DuckDB does. */
export function uniqueNames(given: string[]): string[] {
  // An empty header name (pandas' to_csv writes its index so) is named as
  // DuckDB names it, column0 (column00 past ten columns): col('') is no name.
  const width = String(given.length - 1).length
  const names = given.map((name, i) => (name === '' ? `column${String(i).padStart(width, '0')}` : name))
  const taken = new Set(names)
  const seen = new Set<string>()
  return names.map((name) => {
    if (!seen.has(name)) {
      seen.add(name)
      return name
    }
    let n = 1
    while (taken.has(`${name}_${n}`)) n++
    const renamed = `${name}_${n}`
    taken.add(renamed)
    seen.add(renamed)
    return renamed
  })
}
