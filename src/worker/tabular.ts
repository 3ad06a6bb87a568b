// Reads CSV and Parquet partitions. CSV blocks follow the text rule (split
// at newlines) with each file's header for all its blocks; Parquet
// partitions are whole row groups, read with hyparquet.

import { parse } from 'csv-parse/sync'
import { parquetReadObjects, type AsyncBuffer } from 'hyparquet'
import { ownTaskError, SpillwayError } from '../base/errors'
import type { PartitionSource } from '../wire/bag'
import { openPlanned, readFailed, readRange } from './file-open'
import { readBlockAt } from './text-blocks'
import { checkDecodes } from './text-decode'
import { codeUnit } from '../wire/text-encoding'

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

export async function parquetItems(src: ParquetSource): Promise<Record<string, unknown>[]> {
  const f = await fileBuffer(src)
  try {
    return (await parquetReadObjects({ file: f.buf, rowStart: src.rowStart, rowEnd: src.rowEnd, columns: src.columns })) as Record<string, unknown>[]
  } catch (e) {
    if (e instanceof SpillwayError) throw e
    throw readFailed(src.path, e, 'could not be read as Parquet')
  } finally {
    await f.close()
  }
}
