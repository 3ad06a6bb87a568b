// One toParquet, one schema. Each partition's records give their columns'
// types (all of them, not a first row group's); the partitions' types are
// unified, and every file of the write is written with the result. Before,
// each file took its types from its own first rows, so one write made
// INTEGER beside DOUBLE, VARCHAR beside BLOB, and a column of nulls in one
// file typed as text: files frame.readParquet refused together, and DuckDB
// read with silent casts. Types as hyparquet-writer infers them: numbers
// INT32 while integral and within 32 bits, INT64 past that (to 2^53), DOUBLE
// once one is not integral, bigints INT64, strings UTF8, bytes BYTE_ARRAY, Dates TIMESTAMP_MILLIS, booleans,
// other objects JSON.

import { ownTaskError } from '../../../base/errors'

/** A column's type: Parquet's physical type and, where one applies, its converted type. */
export type ColumnKind = 'BOOLEAN' | 'INT32' | 'INT64' | 'DOUBLE' | 'UTF8' | 'BYTES' | 'TIMESTAMP' | 'JSON'

/** What the records of a partition (or of several, unified) hold in each column; `kind` undefined where every value is null. */
export interface ColumnTypes {
  names: string[]
  kinds: (ColumnKind | undefined)[]
  nullable: boolean[]
}

const INT32_MIN = -(2 ** 31)
const INT32_MAX = 2 ** 31 - 1

function kindOfValue(v: unknown): ColumnKind {
  if (typeof v === 'boolean') return 'BOOLEAN'
  if (typeof v === 'bigint') return 'INT64'
  if (typeof v === 'number') return Number.isInteger(v) && v >= INT32_MIN && v <= INT32_MAX ? 'INT32' : Number.isSafeInteger(v) ? 'INT64' : 'DOUBLE'
  if (typeof v === 'string') return 'UTF8'
  if (v instanceof Uint8Array) return 'BYTES'
  if (v instanceof Date) return 'TIMESTAMP'
  return 'JSON'
}

const NUMERIC: ColumnKind[] = ['INT32', 'INT64', 'DOUBLE']

/** The kind two partitions' kinds of one column make together, or undefined where none holds both. */
function unifyKinds(a: ColumnKind | undefined, b: ColumnKind | undefined): ColumnKind | undefined | null {
  if (a === undefined) return b
  if (b === undefined || a === b) return a
  if (NUMERIC.includes(a) && NUMERIC.includes(b)) return a === 'DOUBLE' || b === 'DOUBLE' ? 'DOUBLE' : 'INT64'
  return null
}

function conflict(column: string, a: ColumnKind, b: ColumnKind, where: string): Error {
  return ownTaskError(
    'ERR_SPILLWAY_WRITE',
    `toParquet: column ${JSON.stringify(column)} holds ${a} in some records and ${b} in others (${where}); one write has one schema: map the values of that column to one type first`,
    { column, types: [a, b] },
  )
}

/** Column types found by pushing a partition's records one by one (`columns`: the ones written, else the first record's keys). */
export function columnTypesAccumulator(columns: string[] | undefined): { push(v: unknown): void; result(): ColumnTypes } {
  let t: ColumnTypes | undefined
  let at = 0
  return {
    push(v) {
      const i = at++
      if (v === null || typeof v !== 'object' || Array.isArray(v)) return // the writer says which item is not a record
      const r = v as Record<string, unknown>
      t ??= { names: columns ?? Object.keys(r), kinds: [], nullable: [] }
      for (let c = 0; c < t.names.length; c++) {
        const x = r[t.names[c]]
        if (x === null || x === undefined) {
          t.nullable[c] = true
          continue
        }
        const k = kindOfValue(x)
        const u = unifyKinds(t.kinds[c], k)
        if (u === null) throw conflict(t.names[c], t.kinds[c]!, k, `item ${i} of a partition`)
        t.kinds[c] = u
      }
    },
    result: () => t ?? { names: columns ?? [], kinds: [], nullable: [] },
  }
}

/** The partitions' column types as one (the first partition with records names the columns, where `columns` did not). */
export function unifyColumnTypes(parts: ColumnTypes[]): ColumnTypes {
  const named = parts.find((p) => p.names.length > 0)
  if (!named) return { names: [], kinds: [], nullable: [] }
  const out: ColumnTypes = { names: named.names, kinds: [], nullable: [] }
  for (const p of parts) {
    for (let c = 0; c < out.names.length; c++) {
      const j = p.names === named.names ? c : p.names.indexOf(out.names[c])
      // A partition without the column (its records lack the field) gives it nulls.
      if (j < 0) {
        if (p.names.length) out.nullable[c] = true
        continue
      }
      const u = unifyKinds(out.kinds[c], p.kinds[j])
      if (u === null) throw conflict(out.names[c], out.kinds[c]!, p.kinds[j]!, 'in different partitions')
      out.kinds[c] = u
      out.nullable[c] = (out.nullable[c] ?? false) || (p.nullable[j] ?? false) || p.kinds[j] === undefined
    }
  }
  return out
}

/** A Parquet schema element of hyparquet-writer's for a unified column (a column of nulls alone: nullable text, as DuckDB reads it). */
export function schemaElement(name: string, kind: ColumnKind | undefined, nullable: boolean): Record<string, unknown> {
  const repetition_type = nullable || kind === undefined ? 'OPTIONAL' : 'REQUIRED'
  switch (kind) {
    case 'BOOLEAN':
    case 'INT32':
    case 'INT64':
    case 'DOUBLE':
      return { name, type: kind, repetition_type }
    case 'TIMESTAMP':
      return { name, type: 'INT64', converted_type: 'TIMESTAMP_MILLIS', repetition_type }
    case 'BYTES':
      return { name, type: 'BYTE_ARRAY', repetition_type }
    case 'JSON':
      return { name, type: 'BYTE_ARRAY', converted_type: 'JSON', repetition_type }
    default:
      return { name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type }
  }
}

/** A record's value as the unified column takes it: an integral number in an INT64 column as a bigint. */
export function valueFor(kind: ColumnKind | undefined, v: unknown): unknown {
  if (kind === 'INT64' && typeof v === 'number') return BigInt(v)
  return v
}
