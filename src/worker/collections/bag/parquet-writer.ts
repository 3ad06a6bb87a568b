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

function* checkedRecords(path: string, first: IteratorResult<unknown>, rest: Iterator<unknown>): Iterable<Record<string, unknown>> {
  let i = 0
  for (let r = first; !r.done; r = rest.next()) {
    const v = r.value
    if (v === null || typeof v !== 'object' || Array.isArray(v)) {
      throw ownTaskError('ERR_SPILLWAY_WRITE', `could not write ${path}: item ${i} of its partition is ${kindOf(v)}, not a record (an object of fields); map the items to objects first`, { path, item: i, type: kindOf(v) })
    }
    yield v as Record<string, unknown>
    i++
  }
}

export function writeParquet(path: string, items: Iterable<unknown>, f: ParquetFormat): Promise<string> {
  return writeAtomically(path, async (tmp) => {
    const it = items[Symbol.iterator]()
    const first = it.next()
    const names = f.columns ?? (first.done ? [] : Object.keys((first.value ?? {}) as object))
    if (names.length === 0) {
      throw ownTaskError('ERR_SPILLWAY_WRITE', `could not write ${path}: its partition is empty and toParquet was given no columns, so the file would have no schema; pass columns with their types' first values, or filter out empty partitions`, { path })
    }
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
