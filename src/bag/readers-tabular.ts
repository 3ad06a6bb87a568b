// Bags of records from CSV and Parquet files, planned on the client: each
// CSV file's header read once and given to all its blocks; each Parquet
// file's footer read for its row groups.

import { isUtf8 } from 'node:buffer'
import { closeSync, constants, openSync, readSync } from 'node:fs'
import { parse } from 'csv-parse/sync'
import { parquetMetadata, type FileMetaData } from 'hyparquet'
import { ArgumentError, SpillwayError } from '../base/errors'
import { parseBytes } from '../base/units'
import type { TextBlock } from '../wire/bag'
import { exactKind, leafColumns, READABLE_PARQUET_CODECS } from '../wire/parquet-types'
import { codeUnit, isUtf8Encoding } from '../wire/text-encoding'
import { Bag } from './bag'
import type { PartDef } from './graph'
import { blockStep, expandPaths, plannedFile, statFile, textEncodingOptions } from './readers'

export interface ReadCsvOptions {
  /** Bytes per partition (default 64 MiB); small files are packed together up to it. */
  blocksize?: number | string
  /** Field delimiter, default ','. */
  delimiter?: string
  /** The quote character, default '"'; false when fields are never quoted (a '"' is then an ordinary character). */
  quote?: string | false
  /** Strip a byte order mark before the header (default true: Excel's "CSV UTF-8" starts with one, and its first column must read "id", not "\uFEFFid"). */
  bom?: boolean
  /**
   * Fields that are numbers as written ('12', '-0.5', '1e3') become numbers
   * (default false: every field is a string). An integer past 2^53, which
   * a number would round, stays a string; '' stays ''.
   */
  cast?: boolean
  /** Only these columns, by their header names (a file whose header lacks one fails when the bag is built). */
  columns?: string[]
  encoding?: BufferEncoding
  /** Bytes not valid in the encoding: 'strict' (default) fails naming the file and byte, 'replace' reads U+FFFD for them. */
  errors?: 'strict' | 'replace'
  /**
   * Fields may hold newlines inside quotes: each file is then read whole,
   * since a block boundary could fall inside a quoted field (Dask's
   * read_csv splits such a row in two; here a block that does not parse
   * fails with a message that points to this option).
   */
  quotedNewlines?: boolean
}

const CSV_OPTIONS = new Set(['blocksize', 'bom', 'cast', 'columns', 'delimiter', 'encoding', 'errors', 'quote', 'quotedNewlines'])

function bad(field: string, value: unknown, allowed: string, what: string): ArgumentError {
  return new ArgumentError([{ field, value, allowed }], what)
}

function readPrefix(path: string, position: number, length: number): Buffer {
  // Without blocking: a FIFO put in the file's place since it was stat'ed would hold the open.
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0))
  try {
    const buf = Buffer.alloc(length)
    const n = readSync(fd, buf, 0, length, position)
    return buf.subarray(0, n)
  } finally {
    closeSync(fd)
  }
}

/** The length of the header record in `text`: up to its first newline outside quotes (a header's quoted field may hold one). */
function headerLength(text: string, quote: string): number {
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === quote) quoted = !quoted
    else if (c === '\n' && !quoted) return i
  }
  return text.length
}

interface CsvDialect {
  delimiter: string
  /** '' when fields are never quoted. */
  quote: string
  bom: boolean
}

/** A file's column names and the bytes its header takes (with its newline and any byte order mark). */
function headerOf(path: string, encoding: BufferEncoding, dialect: CsvDialect, decode: { errors?: 'replace' }): { cols: string[]; bytes: number } {
  let head = readPrefix(path, 0, 1 << 20)
  if (codeUnit(encoding) === 2) head = head.subarray(0, head.length & ~1)
  const text = head.toString(encoding)
  const len = headerLength(text, dialect.quote)
  const line = text.slice(0, len)
  const bytes = Buffer.byteLength(line, encoding)
  if (decode.errors !== 'replace' && isUtf8Encoding(encoding) && !isUtf8(head.subarray(0, bytes))) {
    throw new SpillwayError('ERR_SPILLWAY_DECODE', `readCsv: ${path}'s header is not valid UTF-8: pass the file's own encoding, or errors: 'replace'`, { path, encoding })
  }
  let cols: string[] | undefined
  try {
    // The mark decodes to U+FEFF in UTF-8 and UTF-16 alike.
    const record = dialect.bom && line.startsWith('\uFEFF') ? line.slice(1) : line
    ;[cols] = parse(record, { delimiter: dialect.delimiter, ...(dialect.quote ? { quote: dialect.quote, escape: dialect.quote } : { quote: false }) }) as string[][]
  } catch (e: any) {
    throw new SpillwayError('ERR_SPILLWAY_READ', `readCsv: ${path}'s header (its first record) is not valid CSV: ${e?.message ?? e}`, { path })
  }
  if (!cols?.length) throw new SpillwayError('ERR_SPILLWAY_READ', `readCsv: ${path} has no header line`, { path })
  return { cols, bytes: Math.min(head.length, bytes + Buffer.byteLength('\n', encoding)) }
}

/** The delimiter, quote and bom options, checked. */
function csvDialect(options: ReadCsvOptions, what: string): CsvDialect {
  const delimiter = options.delimiter ?? ','
  if (typeof delimiter !== 'string' || delimiter.length === 0 || /[\r\n]/.test(delimiter)) throw bad('options.delimiter', delimiter, 'a non-empty string without a newline', what)
  const q = options.quote ?? '"'
  if (!(q === false || (typeof q === 'string' && q.length === 1 && !/[\r\n]/.test(q)))) throw bad('options.quote', q, "one character (default '\"'), or false when fields are never quoted", what)
  const quote = q === false ? '' : q
  if (quote && delimiter.includes(quote)) throw bad('options.quote', q, `a character not in the delimiter ${JSON.stringify(delimiter)}`, what)
  const bom = options.bom ?? true
  if (typeof bom !== 'boolean') throw bad('options.bom', bom, 'true (default: strip a byte order mark) or false', what)
  return { delimiter, quote, bom }
}

/** The header's names to read, in the header's order: null for a column `columns` leaves out. */
function selectedHeader(path: string, cols: string[], columns: string[] | undefined): (string | null)[] {
  if (!columns) return cols
  const missing = columns.filter((c) => !cols.includes(c))
  if (missing.length) throw new SpillwayError('ERR_SPILLWAY_COLUMN_NOT_FOUND', `readCsv: ${path} has no column ${missing.map((c) => JSON.stringify(c)).join(', ')} (its header: ${cols.map((c) => JSON.stringify(c)).join(', ')})`, { path, column: missing[0] })
  return cols.map((c) => (columns.includes(c) ? c : null))
}

export function readCsv(paths: string | string[], options: ReadCsvOptions = {}): Bag<Record<string, string>> {
  const what = 'readCsv'
  if (options === null || typeof options !== 'object') throw bad('options', options, `an object { ${[...CSV_OPTIONS].join(', ')} }`, what)
  for (const k of Object.keys(options)) if (!CSV_OPTIONS.has(k)) throw bad(`options.${k}`, (options as any)[k], `one of ${[...CSV_OPTIONS].join(', ')}`, what)
  const blocksize = options.blocksize === undefined ? 64 * 2 ** 20 : parseBytes(options.blocksize)
  if (!blocksize || blocksize < 1) throw bad('options.blocksize', options.blocksize, "a positive number of bytes, or a size such as '64 MiB'", what)
  const { encoding, decode } = textEncodingOptions(options, what)
  const dialect = csvDialect(options, what)
  const { delimiter, quote } = dialect
  const cast = options.cast ?? false
  if (typeof cast !== 'boolean') throw bad('options.cast', cast, "true (numbers as written become numbers) or false (default: every field a string); for other conversions, .map() the rows", what)
  const columns = options.columns
  if (columns !== undefined && !(Array.isArray(columns) && columns.length > 0 && columns.every((c) => typeof c === 'string'))) throw bad('options.columns', columns, 'a non-empty array of column names', what)
  const quotedNewlines = options.quotedNewlines ?? false
  if (typeof quotedNewlines !== 'boolean') throw bad('options.quotedNewlines', quotedNewlines, 'true or false', what)
  const extra = { ...(quote === '"' ? {} : { quote }), ...(cast ? { cast } : {}) }
  const parts: PartDef[] = []
  let blocks: TextBlock[] = []
  let header: (string | null)[][] = []
  let headerBytes: number[] = []
  let bytes = 0
  const flush = () => {
    if (blocks.length) parts.push({ source: { kind: 'csv', blocks, header, headerBytes, encoding, delimiter, quotedNewlines, ...extra, ...decode }, deps: [] })
    blocks = []
    header = []
    headerBytes = []
    bytes = 0
  }
  for (const path of expandPaths(paths, what)) {
    const st = statFile(path, what)
    const head = headerOf(path, encoding, dialect, decode)
    const cols = selectedHeader(path, head.cols, columns)
    const file = plannedFile(path, st)
    if (st.size < blocksize || quotedNewlines) {
      if (bytes + st.size > blocksize) flush()
      blocks.push({ ...file, start: 0, end: st.size })
      header.push(cols)
      headerBytes.push(head.bytes)
      bytes += st.size
      if (quotedNewlines && bytes >= blocksize) flush()
    } else {
      flush()
      // The first block holds the whole header, whatever newlines it quotes.
      const step = blockStep(blocksize, encoding)
      for (let start = 0; start < st.size; start = start === 0 ? Math.max(step, head.bytes) : start + step) {
        const end = Math.min(st.size, start === 0 ? Math.max(step, head.bytes) : start + step)
        parts.push({ source: { kind: 'csv', blocks: [{ ...file, start, end }], header: [cols], headerBytes: [head.bytes], encoding, delimiter, quotedNewlines, ...extra, ...decode }, deps: [] })
      }
    }
  }
  flush()
  return new Bag('read-csv', parts)
}

export interface ReadParquetOptions {
  /** Only these columns. */
  columns?: string[]
  /** Row groups per partition (default 1). */
  rowGroupsPerPartition?: number
  /**
   * INT64 values as 'number' (the default: what arithmetic, JSON.stringify
   * and the reductions of other numbers take; a value past 2^53, which a
   * number would round, fails the partition with ERR_SPILLWAY_UNSAFE_INTEGER
   * naming the file, column and row) or as 'bigint' (exact, always).
   */
  int64?: 'number' | 'bigint'
}

const PARQUET_OPTIONS = new Set(['columns', 'int64', 'rowGroupsPerPartition'])

function footerOf(path: string, size: number): FileMetaData {
  const tail = readPrefix(path, Math.max(0, size - 8), 8)
  if (size < 12 || tail.subarray(4).toString('latin1') !== 'PAR1') throw new SpillwayError('ERR_SPILLWAY_READ', `readParquet: ${path} is not a Parquet file (no PAR1 footer)`, { path })
  const len = tail.readUInt32LE(0)
  if (len + 8 > size) throw new SpillwayError('ERR_SPILLWAY_READ', `readParquet: ${path} has a footer longer than the file`, { path })
  const footer = readPrefix(path, size - 8 - len, len + 8)
  return parquetMetadata(footer.buffer.slice(footer.byteOffset, footer.byteOffset + footer.length) as ArrayBuffer)
}

/**
 * Refuses, when the bag is built rather than when a worker reads it, a
 * column (of those asked for) the reader cannot read, or could only read
 * rounded: one compressed with a codec it lacks, a DECIMAL stored as
 * BYTE_ARRAY, or a DECIMAL or sub-millisecond TIMESTAMP inside a nested
 * column (only top-level ones are converted exactly).
 */
function checkReadable(path: string, meta: FileMetaData, columns: string[] | undefined): void {
  const wanted = (name: string) => !columns || columns.includes(name)
  for (const g of meta.row_groups) {
    for (const c of g.columns) {
      const m = c.meta_data
      if (!m || !wanted(m.path_in_schema[0]) || READABLE_PARQUET_CODECS.includes(m.codec)) continue
      const column = m.path_in_schema.join('.')
      throw new SpillwayError('ERR_SPILLWAY_READ', `readParquet: ${path}: column ${JSON.stringify(column)} is compressed with ${m.codec}, which spillway's Parquet reader cannot read (it reads ${READABLE_PARQUET_CODECS.join(', ')}): rewrite the file with one of those, or leave the column out with columns`, { path, column, codec: m.codec })
    }
  }
  for (const { element, path: p, topLevel } of leafColumns(meta.schema)) {
    const exact = exactKind(element)
    if (!exact || !wanted(p[0]) || (topLevel && element.type !== 'BYTE_ARRAY')) continue
    const column = p.join('.')
    const what = exact.kind === 'decimal' ? 'DECIMAL' : `TIMESTAMP in ${exact.unit.toLowerCase()}`
    const where = topLevel ? 'stored as BYTE_ARRAY' : 'inside a nested column'
    throw new SpillwayError('ERR_SPILLWAY_READ', `readParquet: ${path}: column ${JSON.stringify(column)} is a ${what} ${where}, which spillway's Parquet reader could only give rounded: leave it out with columns, or store it as a top-level column`, { path, column })
  }
}

/** One partition per row group (or per `rowGroupsPerPartition`), its rows as objects. */
export function readParquet(paths: string | string[], options: ReadParquetOptions = {}): Bag<Record<string, unknown>> {
  const what = 'readParquet'
  if (options === null || typeof options !== 'object') throw bad('options', options, `an object { ${[...PARQUET_OPTIONS].join(', ')} }`, what)
  for (const k of Object.keys(options)) if (!PARQUET_OPTIONS.has(k)) throw bad(`options.${k}`, (options as any)[k], `one of ${[...PARQUET_OPTIONS].join(', ')}`, what)
  const per = options.rowGroupsPerPartition ?? 1
  if (!(Number.isSafeInteger(per) && per >= 1)) throw bad('options.rowGroupsPerPartition', per, 'a positive integer', what)
  const columns = options.columns
  if (columns !== undefined && !(Array.isArray(columns) && columns.length > 0 && columns.every((c) => typeof c === 'string'))) throw bad('options.columns', columns, 'a non-empty array of column names', what)
  const int64 = options.int64 ?? 'number'
  if (int64 !== 'number' && int64 !== 'bigint') throw bad('options.int64', int64, "'number' (default: refused past 2^53) or 'bigint'", what)
  const parts: PartDef[] = []
  for (const path of expandPaths(paths, what)) {
    const st = statFile(path, what)
    let groups: number[]
    try {
      const meta = footerOf(path, st.size)
      checkReadable(path, meta, columns)
      groups = meta.row_groups.map((g) => Number(g.num_rows))
    } catch (e: any) {
      if (e instanceof SpillwayError) throw e
      throw new SpillwayError('ERR_SPILLWAY_READ', `readParquet: ${path}: ${e?.message ?? e}`, { path })
    }
    let row = 0
    for (let g = 0; g < groups.length; g += per) {
      const n = groups.slice(g, g + per).reduce((a, b) => a + b, 0)
      parts.push({ source: { kind: 'parquet', ...plannedFile(path, st), rowStart: row, rowEnd: row + n, columns, ...(int64 === 'bigint' ? { int64 } : {}) }, deps: [] })
      row += n
    }
  }
  return new Bag('read-parquet', parts)
}
