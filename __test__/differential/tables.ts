// The differential suite's tables: fast-check arbitraries for two small
// tables (`t`, and `u` to join with), their values as plain JS (bigint for
// int64 and decimals' unscaled values, numbers for float64, days since
// 1970-01-01 for dates), and the two ways they reach each engine: an
// apache-arrow Table for spillway's frame.fromArrow, SQL literals for DuckDB.
//
// The value domains are narrow on purpose: keys repeat (so groups, joins and
// sort ties have several rows), and each column carries the values where
// engines tend to differ — null, NaN, +0 / -0, ±Infinity, int64's extremes,
// dates before 1970, '' and non-ASCII strings.

import fc from 'fast-check'
import { Bool, DateDay, Decimal, Float64, Int64, makeData, makeVector, Table, Utf8, type Data, type DataType, type Vector } from 'apache-arrow'

export type ColType = 'int64' | 'float64' | 'utf8' | 'bool' | 'date32' | 'decimal'
export type Value = bigint | number | string | boolean | null

/** Decimal columns are DECIMAL(18, 2): the unscaled bigint of a value `v` is v * 100. */
export const DECIMAL_PRECISION = 18
export const DECIMAL_SCALE = 2

export interface Column {
  name: string
  type: ColType
}

export interface TableData {
  columns: Column[]
  /** Row-major, one value per column. */
  rows: Value[][]
}

export const MAX64 = 2n ** 63n - 1n
export const MIN64 = -(2n ** 63n)

// --- values ----------------------------------------------------------------

const nullable = <T>(a: fc.Arbitrary<T>, nullWeight = 1): fc.Arbitrary<T | null> => fc.oneof({ arbitrary: fc.constant(null), weight: nullWeight }, { arbitrary: a, weight: 6 })

/** A join / group key: few values (so they repeat), and an extreme now and then. */
export const keyInt = nullable(fc.oneof({ arbitrary: fc.bigInt(-2n, 3n), weight: 12 }, { arbitrary: fc.constantFrom(MAX64, MIN64), weight: 1 }))

/** A wide int64: small, large, and the extremes. */
export const wideInt = nullable(
  fc.oneof(
    { arbitrary: fc.bigInt(-5n, 5n), weight: 5 },
    { arbitrary: fc.bigInt(-(10n ** 12n), 10n ** 12n), weight: 3 },
    { arbitrary: fc.constantFrom(MAX64, MIN64, MAX64 - 1n, MIN64 + 1n, 2n ** 53n + 1n, -(2n ** 53n) - 1n), weight: 2 },
  ),
)

/** A float64: the special values often, else small integers and moderate fractions (sums of these stay far from overflow). */
export const float = nullable(
  fc.oneof(
    { arbitrary: fc.constantFrom(NaN, 0, -0, Infinity, -Infinity), weight: 4 },
    { arbitrary: fc.integer({ min: -3, max: 3 }), weight: 4 },
    { arbitrary: fc.double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true }), weight: 3 },
    { arbitrary: fc.constantFrom(0.1, 2.5, -2.5, 1e-300, -1e-300, 5e-324, 1e15 + 0.5), weight: 1 },
  ),
)

/** Strings: a few that repeat (keys), '' and unicode beyond the BMP, and ones a CSV writer has to quote. */
export const STRINGS = ['', 'a', 'A', 'b', 'ab', 'é', 'e\u0301', 'Ωmega', '日本', '🦆', 'a,b', 'say "hi"', 'line\nbreak', ' ', 'NA', 'null', 'z']
/**
 * Each code point's upper and lower case one code point: spillway's str.upper / lower use Unicode's full case
 * mapping ('ß' → 'SS', 'ﬀ' → 'FF'), DuckDB's the one-to-one simple mapping (docs/frame-differential.md).
 */
export const simpleCase = (s: string) => [...s].every((c) => [...c.toUpperCase()].length === 1 && [...c.toLowerCase()].length === 1)
export const str = nullable(fc.oneof({ arbitrary: fc.constantFrom(...STRINGS), weight: 6 }, { arbitrary: fc.string({ unit: 'grapheme', maxLength: 4 }).filter(simpleCase), weight: 1 }))

export const bool = nullable(fc.boolean())

const dayOf = (y: number, m: number, d: number) => Math.round(Date.UTC(y, m - 1, d) / 86_400_000)
/** Days since 1970-01-01: mostly before 1970, a few repeating, and years 1 and 9999. */
export const date = nullable(
  fc.oneof(
    { arbitrary: fc.constantFrom(dayOf(1969, 12, 31), 0, dayOf(1900, 2, 28), dayOf(1600, 2, 29), dayOf(2000, 2, 29)), weight: 3 },
    { arbitrary: fc.integer({ min: dayOf(1700, 1, 1), max: dayOf(2100, 12, 31) }), weight: 3 },
    { arbitrary: fc.constantFrom(dayOf(1000, 1, 1), dayOf(9999, 12, 31)), weight: 1 },
  ),
)

/** DECIMAL(18, 2) as its unscaled value: cents, a few repeating, and the widest 18 digits. */
export const decimal = nullable(
  fc.oneof({ arbitrary: fc.constantFrom(0n, 1n, -1n, 150n, -150n, 100n), weight: 3 }, { arbitrary: fc.bigInt(-(10n ** 9n), 10n ** 9n), weight: 2 }, { arbitrary: fc.constantFrom(10n ** 18n - 1n, -(10n ** 18n - 1n)), weight: 1 }),
)

// --- the two tables --------------------------------------------------------

/** `t`: rid (its row number, never null), a key k, a wide int i, a float x, a string s, a bool b, a date d, a decimal m. */
export const T_COLUMNS: Column[] = [
  { name: 'rid', type: 'int64' },
  { name: 'k', type: 'int64' },
  { name: 'i', type: 'int64' },
  { name: 'x', type: 'float64' },
  { name: 's', type: 'utf8' },
  { name: 'b', type: 'bool' },
  { name: 'd', type: 'date32' },
  { name: 'm', type: 'decimal' },
]

/** `u`, the right side of joins: its own rid, keys of t's domains (k, s, x, d, m) and a value v; i clashes with t's name. */
export const U_COLUMNS: Column[] = [
  { name: 'rid', type: 'int64' },
  { name: 'k', type: 'int64' },
  { name: 's', type: 'utf8' },
  { name: 'x', type: 'float64' },
  { name: 'd', type: 'date32' },
  { name: 'm', type: 'decimal' },
  { name: 'v', type: 'int64' },
]

/** Key-like float values for joins and groups: few, with NaN, ±0, ±Infinity and null. */
const keyFloat = nullable(fc.constantFrom(NaN, 0, -0, 1.5, -1, Infinity, -Infinity))
const keyStr = nullable(fc.constantFrom('', 'a', 'A', 'é', 'e\u0301', '🦆', 'a,b'))
const keyDate = nullable(fc.constantFrom(dayOf(1969, 12, 31), 0, dayOf(1900, 2, 28), dayOf(1600, 2, 29)))
const keyDecimal = nullable(fc.constantFrom(0n, 1n, -1n, 150n, 10n ** 18n - 1n))

const tRow = fc.tuple(keyInt, wideInt, fc.oneof(float, keyFloat), fc.oneof(str, keyStr), bool, fc.oneof(date, keyDate), fc.oneof(decimal, keyDecimal))
const uRow = fc.tuple(keyInt, keyStr, keyFloat, keyDate, keyDecimal, wideInt)

const withRid = (rows: Value[][]): Value[][] => rows.map((r, n) => [BigInt(n), ...r])

export const tTable = (maxRows = 40): fc.Arbitrary<TableData> => fc.array(tRow, { maxLength: maxRows, size: 'max' }).map((rows) => ({ columns: T_COLUMNS, rows: withRid(rows) }))
export const uTable = (maxRows = 20): fc.Arbitrary<TableData> => fc.array(uRow, { maxLength: maxRows, size: 'max' }).map((rows) => ({ columns: U_COLUMNS, rows: withRid(rows) }))

/** How a table reaches spillway: frame.fromArrow in n partitions, or Parquet files (one per part) that DuckDB wrote from its own table. */
export type Ingest = { kind: 'arrow'; npartitions: number } | { kind: 'parquet'; files: number }
export const ingest: fc.Arbitrary<Ingest> = fc.oneof(
  // Mostly a few partitions; now and then more than a group-by's splitEvery (8), so its partial states go through the shuffle.
  fc.record({ kind: fc.constant('arrow' as const), npartitions: fc.oneof({ arbitrary: fc.integer({ min: 1, max: 3 }), weight: 4 }, { arbitrary: fc.integer({ min: 9, max: 12 }), weight: 1 }) }),
  fc.record({ kind: fc.constant('parquet' as const), files: fc.integer({ min: 1, max: 3 }) }),
)

// --- to apache-arrow ---------------------------------------------------------

function validity(values: Value[]): { nullBitmap: Uint8Array; nullCount: number } {
  const bitmap = new Uint8Array(Math.ceil(values.length / 8) || 1)
  let nullCount = 0
  values.forEach((v, i) => (v === null ? nullCount++ : (bitmap[i >> 3] |= 1 << (i & 7))))
  return { nullBitmap: bitmap, nullCount }
}

function vectorOf(type: ColType, values: Value[]): Vector {
  const length = values.length
  const { nullBitmap, nullCount } = validity(values)
  let data: Data<DataType>
  switch (type) {
    case 'int64':
      data = makeData({ type: new Int64(), length, nullCount, nullBitmap, data: BigInt64Array.from(values, (v) => (v === null ? 0n : (v as bigint))) })
      break
    case 'float64':
      data = makeData({ type: new Float64(), length, nullCount, nullBitmap, data: Float64Array.from(values, (v) => (v === null ? 0 : (v as number))) })
      break
    case 'date32':
      data = makeData({ type: new DateDay(), length, nullCount, nullBitmap, data: Int32Array.from(values, (v) => (v === null ? 0 : (v as number))) })
      break
    case 'bool': {
      const bits = new Uint8Array(Math.ceil(length / 8) || 1)
      values.forEach((v, i) => v === true && (bits[i >> 3] |= 1 << (i & 7)))
      data = makeData({ type: new Bool(), length, nullCount, nullBitmap, data: bits })
      break
    }
    case 'utf8': {
      const enc = new TextEncoder()
      const parts = values.map((v) => enc.encode(v === null ? '' : (v as string)))
      const valueOffsets = new Int32Array(length + 1)
      parts.forEach((p, i) => (valueOffsets[i + 1] = valueOffsets[i] + p.length))
      const bytes = new Uint8Array(valueOffsets[length])
      parts.forEach((p, i) => bytes.set(p, valueOffsets[i]))
      data = makeData({ type: new Utf8(), length, nullCount, nullBitmap, valueOffsets, data: bytes })
      break
    }
    case 'decimal': {
      // 128-bit two's complement, four little-endian 32-bit words a value.
      const words = new Uint32Array(length * 4)
      values.forEach((v, i) => {
        let x = BigInt.asUintN(128, v === null ? 0n : (v as bigint))
        for (let w = 0; w < 4; w++, x >>= 32n) words[i * 4 + w] = Number(x & 0xffffffffn)
      })
      data = makeData({ type: new Decimal(DECIMAL_SCALE, DECIMAL_PRECISION, 128), length, nullCount, nullBitmap, data: words })
      break
    }
  }
  return makeVector(data)
}

/** The table as an apache-arrow Table, columns in order. */
export function arrowTable(t: TableData): Table {
  return new Table(Object.fromEntries(t.columns.map((c, j) => [c.name, vectorOf(c.type, t.rows.map((r) => r[j]))])))
}

// --- to DuckDB ---------------------------------------------------------------

export const SQL_TYPE: Record<ColType, string> = { int64: 'BIGINT', float64: 'DOUBLE', utf8: 'VARCHAR', bool: 'BOOLEAN', date32: 'DATE', decimal: `DECIMAL(${DECIMAL_PRECISION}, ${DECIMAL_SCALE})` }

export const sqlString = (s: string) => `'${s.replaceAll("'", "''")}'`
export const isoDate = (days: number) => {
  const d = new Date(days * 86_400_000)
  const y = d.getUTCFullYear()
  return `${y < 0 ? '-' : ''}${String(Math.abs(y)).padStart(4, '0')}-${String(d.getUTCMonth() + 1).padStart(2, '0')}-${String(d.getUTCDate()).padStart(2, '0')}`
}
export const decimalText = (unscaled: bigint) => {
  const neg = unscaled < 0n
  const digits = (neg ? -unscaled : unscaled).toString().padStart(DECIMAL_SCALE + 1, '0')
  return `${neg ? '-' : ''}${digits.slice(0, -DECIMAL_SCALE)}.${digits.slice(-DECIMAL_SCALE)}`
}
export const floatText = (x: number) => (Number.isNaN(x) ? 'NaN' : x === Infinity ? 'Infinity' : x === -Infinity ? '-Infinity' : Object.is(x, -0) ? '-0.0' : String(x))

/** A value as a typed SQL literal (a cast from a string, so -0.0, NaN and int64's minimum read exactly). */
export function sqlLiteral(type: ColType, v: Value): string {
  if (v === null) return `NULL::${SQL_TYPE[type]}`
  switch (type) {
    case 'int64':
      return `'${v}'::BIGINT`
    case 'float64':
      return `'${floatText(v as number)}'::DOUBLE`
    case 'utf8':
      return `${sqlString(v as string)}::VARCHAR`
    case 'bool':
      return v ? 'true' : 'false'
    case 'date32':
      return `DATE '${isoDate(v as number)}'`
    case 'decimal':
      return `'${decimalText(v as bigint)}'::${SQL_TYPE.decimal}`
  }
}

/** The statements that make `name` in DuckDB holding `t`'s rows. */
export function createTableSql(name: string, t: TableData): string[] {
  const out = [`CREATE OR REPLACE TABLE ${name} (${t.columns.map((c) => `"${c.name}" ${SQL_TYPE[c.type]}`).join(', ')})`]
  if (t.rows.length > 0) out.push(`INSERT INTO ${name} VALUES ${t.rows.map((r) => `(${r.map((v, j) => sqlLiteral(t.columns[j].type, v)).join(', ')})`).join(', ')}`)
  return out
}

/** A readable dump of a table (for a failure's report): its columns, then one JSON-ish row a line. */
export function showTable(name: string, t: TableData): string {
  const cell = (type: ColType, v: Value) => (v === null ? 'null' : type === 'int64' ? `${v}n` : type === 'float64' ? floatText(v as number) : type === 'date32' ? isoDate(v as number) : type === 'decimal' ? decimalText(v as bigint) : JSON.stringify(v))
  return [`${name} (${t.columns.map((c) => `${c.name} ${c.type}`).join(', ')}): ${t.rows.length} rows`, ...t.rows.map((r) => `  [${r.map((v, j) => cell(t.columns[j].type, v)).join(', ')}]`)].join('\n')
}
