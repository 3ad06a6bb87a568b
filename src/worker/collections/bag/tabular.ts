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

type CsvSource = Extract<PartitionSource, { kind: 'csv' }>
type ParquetSource = Extract<PartitionSource, { kind: 'parquet' }>

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
      const rows = parse(bytes.toString(src.encoding), { columns: src.header[i], delimiter: src.delimiter, skip_empty_lines: true, relax_quotes: false }) as Record<string, string>[]
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

export async function parquetItems(src: ParquetSource): Promise<Record<string, unknown>[]> {
  const f = await fileBuffer(src)
  try {
    const { metadata, fixes } = exactRead(await parquetMetadataAsync(f.buf))
    const rows = (await parquetReadObjects({ file: f.buf, metadata, rowStart: src.rowStart, rowEnd: src.rowEnd, columns: src.columns, parsers: PARSERS })) as Record<string, unknown>[]
    for (const row of rows) for (const [name, fix] of fixes) if (row[name] !== undefined && row[name] !== null) row[name] = fix(row[name])
    return rows
  } catch (e) {
    if (e instanceof SpillwayError) throw e
    throw readFailed(src.path, e, 'could not be read as Parquet')
  } finally {
    await f.close()
  }
}
