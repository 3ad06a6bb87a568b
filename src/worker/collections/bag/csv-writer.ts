// Writes a partition's records as CSV, a record at a time as the items are
// taken (worker/collections/bag/text-writer.ts streams them to disk): the
// columns given, or the first record's keys; fields quoted as RFC 4180
// asks (a delimiter, a quote or a newline in them).

import { ownTaskError } from '../../../base/errors'
import type { Compression, CsvFormat } from '../../../wire/bag'
import { kindOf, writeChunks } from './text-writer'

function field(v: unknown, delimiter: string): string {
  let s: string
  if (v === null || v === undefined) return ''
  if (typeof v === 'string') s = v
  else if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v)
  else if (v instanceof Date) return v.toISOString()
  else s = JSON.stringify(v)
  return s.includes(delimiter) || /["\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s
}

function* records(path: string, items: Iterable<unknown>, f: CsvFormat): Iterable<string> {
  let columns = f.columns
  let i = 0
  for (const v of items) {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) {
      throw ownTaskError('ERR_SPILLWAY_WRITE', `could not write ${path}: item ${i} of its partition is ${kindOf(v)}, not a record (an object of fields); map the items to objects first`, { path, item: i, type: kindOf(v) })
    }
    if (!columns) {
      columns = Object.keys(v)
      if (f.header) yield columns.map((c) => field(c, f.delimiter)).join(f.delimiter) + '\n'
    } else if (i === 0 && f.header) yield columns.map((c) => field(c, f.delimiter)).join(f.delimiter) + '\n'
    yield columns.map((c) => field((v as Record<string, unknown>)[c], f.delimiter)).join(f.delimiter) + '\n'
    i++
  }
  // An empty partition still says its columns, when it knows them.
  if (i === 0 && f.header && f.columns) yield f.columns.map((c) => field(c, f.delimiter)).join(f.delimiter) + '\n'
}

export function writeCsv(path: string, items: Iterable<unknown>, compression: Compression, f: CsvFormat): Promise<string> {
  return writeChunks(path, records(path, items, f), compression)
}
