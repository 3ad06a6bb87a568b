// A write step: the partition's items to its file, as lines, CSV records or
// Parquet rows; the step's value is the path written.

import type { Step } from '../../../wire/bag'
import { writeCsv } from './csv-writer'
import { writeParquet } from './parquet-writer'
import type { ColumnTypes } from './parquet-schema'
import { writeLines } from './text-writer'

/** `extra`: the task's trailing inputs (a Parquet write's unified column types among them). */
export function writeStep(s: Extract<Step, { op: 'write' }>, index: number, items: Iterable<unknown>, extra: unknown[]): Promise<string> {
  const path = s.pattern.replace('*', String(index))
  if (s.parquet) return writeParquet(path, items, s.parquet, extra[s.parquet.schemaInput] as ColumnTypes)
  if (s.csv) return writeCsv(path, items, s.compression, s.csv)
  return writeLines(path, items, s.compression)
}
