// Writes a partition's records as a Parquet file, a row group at a time as
// the items are taken (hyparquet-writer's parquetWriteRows pulls them and
// flushes the file about a MiB at a time), under a temporary name first.
// The columns are those given, or the first record's keys; their types are
// inferred from the first row group (bigints are INT64).

import { parquetWriteRows } from 'hyparquet-writer'
import { ownTaskError } from '../../../base/errors'
import { PARQUET_COMPRESSORS } from '../../../native/parquet-codecs'
import type { ParquetFormat } from '../../../wire/bag'
import { kindOf, writeAtomically } from './text-writer'

// Its node entry, whose types the package maps only under node16 resolution: a file writer that flushes about a MiB at a time.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { fileWriter } = require('hyparquet-writer/src/node.js') as { fileWriter: (filename: string) => Parameters<typeof parquetWriteRows>[0]['writer'] }

function record(path: string, v: unknown, i: number): Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw ownTaskError('ERR_SPILLWAY_WRITE', `could not write ${path}: item ${i} of its partition is ${kindOf(v)}, not a record (an object of fields); map the items to objects first`, { path, item: i, type: kindOf(v) })
  }
  return v as Record<string, unknown>
}

function* checkedRecords(path: string, first: Record<string, unknown>, rest: Iterator<unknown>): Iterable<Record<string, unknown>> {
  yield first
  let i = 1
  for (let r = rest.next(); !r.done; r = rest.next()) yield record(path, r.value, i++)
}

export function writeParquet(path: string, items: Iterable<unknown>, f: ParquetFormat): Promise<string> {
  return writeAtomically(path, async (tmp) => {
    const it = items[Symbol.iterator]()
    const head = it.next()
    // The column types come from the rows: an empty partition has none to give.
    if (head.done) throw ownTaskError('ERR_SPILLWAY_WRITE', `could not write ${path}: its partition is empty, and a Parquet file's column types come from its rows; repartition the bag, or filter out what empties a partition, first`, { path })
    const first = record(path, head.value, 0)
    const names = f.columns ?? Object.keys(first)
    await parquetWriteRows({
      writer: fileWriter(tmp),
      rows: checkedRecords(path, first, it),
      columns: names.map((name) => ({ name })),
      codec: f.codec as any,
      compressors: PARQUET_COMPRESSORS,
      ...(f.rowGroupSize ? { rowGroupSize: f.rowGroupSize } : {}),
    })
  })
}
