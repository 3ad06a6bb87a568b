// Reads CSV and Parquet partitions. CSV blocks follow the text rule (split
// at newlines) with each file's header for all its blocks; Parquet
// partitions are whole row groups, read with hyparquet.

import { parse } from 'csv-parse/sync'
import { parquetMetadataAsync, parquetReadObjects, type AsyncBuffer, type FileMetaData, type SchemaElement } from 'hyparquet'
import { ownTaskError, SpillwayError } from '../../../base/errors'
import type { PartitionSource } from '../../../wire/bag'
import { openPlanned, readFailed, readRange } from './file-open'
import { readBlockAt } from './text-blocks'
import { checkDecodes } from './text-decode'
import { decimalString, exactKind, isoTimestamp, leafColumns, unscaledOf } from '../../../wire/parquet-types'
import { codeUnit } from '../../../wire/text-encoding'
import { PARQUET_DECOMPRESSORS } from '../../../native/parquet-codecs'

type CsvSource = Extract<PartitionSource, { kind: 'csv' }>
type ParquetSource = Extract<PartitionSource, { kind: 'parquet' }>

/** A quote other than '"' is escaped by doubling it, as '"' is. */
function quoting(quote: string | undefined): { quote: string | false; escape?: string } {
  if (quote === undefined) return { quote: '"' }
  return quote ? { quote, escape: quote } : { quote: false }
}

const NUMBER = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/
const INTEGER = /^[-+]?\d+$/

/** readCsv's `cast`: a number as written becomes a number, unless a number would round it (an integer past 2^53). */
function castNumber(value: string): unknown {
  if (!NUMBER.test(value)) return value
  const n = Number(value)
  return INTEGER.test(value) && !Number.isSafeInteger(n) ? value : n
}

export async function csvItems(src: CsvSource): Promise<Record<string, string>[]> {
  const out: Record<string, string>[] = []
  const nl = Buffer.from('\n', src.encoding)
  const unit = codeUnit(src.encoding)
  for (const [i, b] of src.blocks.entries()) {
    let { bytes, offset } = await readBlockAt(b, nl, unit)
    // The first block of a file starts with its header (which may quote newlines: its length was found when planned).
    if (b.start === 0) {
      const end = Math.min(src.headerBytes[i], bytes.length)
      bytes = bytes.subarray(end)
      offset += end
    }
    checkDecodes(bytes, src.encoding, src.errors, { path: b.path, offset })
    try {
      const rows = parse(bytes.toString(src.encoding), { columns: src.header[i], delimiter: src.delimiter, ...quoting(src.quote), cast: src.cast ? castNumber : undefined, skip_empty_lines: true, relax_quotes: false }) as Record<string, string>[]
      for (const r of rows) out.push(r)
    } catch (e: any) {
      const hint = src.quotedNewlines ? '' : ' (a quoted field with a newline in it, cut by a block boundary? pass quotedNewlines: true to read each file whole)'
      throw ownTaskError('ERR_SPILLWAY_READ', `file ${b.path}, bytes ${b.start}-${b.end}: not valid CSV: ${e?.message ?? e}${hint}`, { path: b.path })
    }
  }
  return out
}

async function fileBuffer(src: ParquetSource): Promise<{ buf: AsyncBuffer; close: () => Promise<void> }> {
  const fd = await openPlanned(src)
  const buf: AsyncBuffer = {
    byteLength: src.size,
    async slice(start: number, end?: number) {
      const out = await readRange(fd, start, end ?? src.size)
      return out.buffer.slice(out.byteOffset, out.byteOffset + out.length) as ArrayBuffer
    },
  }
  return { buf, close: () => fd.close() }
}

/** The footer's schema with the exact columns' types taken off (hyparquet then gives their raw values), and how to convert each (wire/parquet-types.ts). */
function exactRead(meta: FileMetaData): { metadata: FileMetaData; fixes: [string, (v: unknown) => unknown][] } {
  const fixes: [string, (v: unknown) => unknown][] = []
  const stripped = new Set<SchemaElement>()
  for (const { element, path, topLevel } of leafColumns(meta.schema)) {
    const exact = exactKind(element)
    // Nested and BYTE_ARRAY ones were refused when the bag was planned.
    if (!exact || !topLevel || element.type === 'BYTE_ARRAY') continue
    stripped.add(element)
    if (exact.kind === 'decimal') fixes.push([path[0], (v) => decimalString(unscaledOf(v), exact.scale)])
    else fixes.push([path[0], (v) => isoTimestamp(BigInt(v as bigint), exact.unit, exact.utc)])
  }
  const schema = meta.schema.map((e) => (stripped.has(e) ? { ...e, converted_type: undefined, logical_type: undefined } : e))
  return { metadata: { ...meta, schema }, fixes }
}

/** INT96 timestamps (nanoseconds, UTC by convention) with all their digits. */
const PARSERS = { timestampFromNanoseconds: (nanos: bigint) => isoTimestamp(nanos, 'NANOS', true) as unknown as Date }

/** Top-level columns that may hold INT64 values hyparquet gives as bigints (exact kinds aside: they are strings). */
function int64Columns(meta: FileMetaData, exact: Set<string>): Set<string> {
  const out = new Set<string>()
  for (const { element, path } of leafColumns(meta.schema)) if (element.type === 'INT64' && !exact.has(path[0])) out.add(path[0])
  return out
}

/** A value with its bigints as numbers (inside lists and structs too), refused past 2^53 where a number would round. */
function toNumbers(v: unknown, where: () => string): unknown {
  if (typeof v === 'bigint') {
    const n = Number(v)
    if (!Number.isSafeInteger(n)) throw ownTaskError('ERR_SPILLWAY_UNSAFE_INTEGER', `${where()}: ${v} is past 2^53 (${Number.MAX_SAFE_INTEGER}), where a number would round it: read the file with int64: 'bigint'`, { value: String(v) })
    return n
  }
  if (Array.isArray(v)) return v.map((x) => toNumbers(x, where))
  if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    const o = v as Record<string, unknown>
    for (const k of Object.keys(o)) o[k] = toNumbers(o[k], where)
  }
  return v
}

export async function parquetItems(src: ParquetSource): Promise<Record<string, unknown>[]> {
  const f = await fileBuffer(src)
  try {
    const { metadata, fixes } = exactRead(await parquetMetadataAsync(f.buf))
    const rows = (await parquetReadObjects({ file: f.buf, metadata, rowStart: src.rowStart, rowEnd: src.rowEnd, columns: src.columns, parsers: PARSERS, compressors: PARQUET_DECOMPRESSORS })) as Record<string, unknown>[]
    for (const row of rows) for (const [name, fix] of fixes) if (row[name] !== undefined && row[name] !== null) row[name] = fix(row[name])
    if (src.int64 !== 'bigint') {
      const ints = [...int64Columns(metadata, new Set(fixes.map(([name]) => name)))].filter((c) => !src.columns || src.columns.includes(c))
      for (const [i, row] of rows.entries()) {
        for (const c of ints) row[c] = toNumbers(row[c], () => `file ${src.path}, column ${JSON.stringify(c)}, row ${src.rowStart + i}`)
      }
    }
    return rows
  } catch (e) {
    if (e instanceof SpillwayError) throw e
    throw readFailed(src.path, e, 'could not be read as Parquet')
  } finally {
    await f.close()
  }
}
