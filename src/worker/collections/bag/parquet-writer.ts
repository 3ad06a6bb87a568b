// Writes a partition's records as a Parquet file, a row group at a time as
// the items are taken (hyparquet-writer's parquetWriteRows pulls them and
// flushes the file about a MiB at a time), under a temporary name first.
// The columns are those given, or the first record's keys; their types are
// the write's own, unified across its partitions (parquet-schema.ts).

import { parquetWriteRows } from 'hyparquet-writer'
import { ownTaskError } from '../../../base/errors'
import { PARQUET_COMPRESSORS } from '../../../native/parquet-codecs'
import type { ParquetFormat } from '../../../wire/bag'
import { kindOf, writeAtomically } from './text-writer'
import { schemaElement, valueFor, type ColumnTypes } from './parquet-schema'

// Its node entry, whose types the package maps only under node16 resolution: a file writer that flushes about a MiB at a time.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { fileWriter } = require('hyparquet-writer/src/node.js') as { fileWriter: (filename: string) => Parameters<typeof parquetWriteRows>[0]['writer'] }

function record(path: string, v: unknown, i: number): Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw ownTaskError('ERR_SPILLWAY_WRITE', `could not write ${path}: item ${i} of its partition is ${kindOf(v)}, not a record (an object of fields); map the items to objects first`, { path, item: i, type: kindOf(v) })
  }
  return v as Record<string, unknown>
}

/** The records, checked, with each value as its column's unified type takes it. */
function* checkedRecords(path: string, first: Record<string, unknown>, rest: Iterator<unknown>, types: ColumnTypes): Iterable<Record<string, unknown>> {
  const converts = types.kinds.some((k) => k === 'INT64')
  const as = (r: Record<string, unknown>) => {
    if (!converts) return r
    const out: Record<string, unknown> = {}
    for (let c = 0; c < types.names.length; c++) out[types.names[c]] = valueFor(types.kinds[c], r[types.names[c]])
    return out
  }
  yield as(first)
  let i = 1
  for (let r = rest.next(); !r.done; r = rest.next()) yield as(record(path, r.value, i++))
}

/** Writes `items` with the write's column types, unified across its partitions (toParquet's parquetSchema reduction). */
export function writeParquet(path: string, items: Iterable<unknown>, f: ParquetFormat, types: ColumnTypes): Promise<string> {
  return writeAtomically(path, async (tmp) => {
    const it = items[Symbol.iterator]()
    const head = it.next()
    const first = head.done ? undefined : record(path, head.value, 0)
    if (!types.names.length) {
      throw ownTaskError('ERR_SPILLWAY_WRITE', `could not write ${path}: no partition of the write has a record, and a Parquet file's columns come from its records; give options.columns, or filter out what empties the bag, first`, { path })
    }
    const schema = [{ name: 'root', num_children: types.names.length }, ...types.names.map((name, c) => schemaElement(name, types.kinds[c], types.nullable[c] ?? false))]
    await parquetWriteRows({
      writer: fileWriter(tmp),
      rows: first ? checkedRecords(path, first, it, types) : [],
      columns: types.names.map((name) => ({ name })),
      schema: schema as any,
      codec: f.codec as any,
      compressors: PARQUET_COMPRESSORS,
      ...(f.rowGroupSize ? { rowGroupSize: f.rowGroupSize } : {}),
    })
  })
}
