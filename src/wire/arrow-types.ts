// The contract's type names ('int64', 'utf8', 'timestamp[ms]', …, as
// crates/core/src/frame/types.rs spells them) and apache-arrow's types, both
// ways: for schemas given in JavaScript and batches made or read there.

import { Bool, DataType, DateDay, DateMillisecond, Float32, Float64, Int8, Int16, Int32, Int64, Null, Timestamp, TimeUnit, Uint8, Uint16, Uint32, Uint64, Utf8, type Table } from 'apache-arrow'
import { ArgumentError, SpillwayError } from '../base/errors'
import type { FieldSpec } from './frame'

const MAKERS: Record<string, () => DataType> = {
  null: () => new Null(),
  bool: () => new Bool(),
  int8: () => new Int8(),
  int16: () => new Int16(),
  int32: () => new Int32(),
  int64: () => new Int64(),
  uint8: () => new Uint8(),
  uint16: () => new Uint16(),
  uint32: () => new Uint32(),
  uint64: () => new Uint64(),
  float32: () => new Float32(),
  float64: () => new Float64(),
  utf8: () => new Utf8(),
  date32: () => new DateDay(),
  date64: () => new DateMillisecond(),
}
const UNITS: Record<string, TimeUnit> = { s: TimeUnit.SECOND, ms: TimeUnit.MILLISECOND, us: TimeUnit.MICROSECOND, ns: TimeUnit.NANOSECOND }
export const TYPE_NAMES = `${Object.keys(MAKERS).join(', ')}, timestamp[s|ms|us|ns]`

export function arrowType(name: string): DataType | undefined {
  const m = MAKERS[name]
  if (m) return m()
  const unit = /^timestamp\[(s|ms|us|ns)\]$/.exec(name)?.[1]
  return unit === undefined ? undefined : new Timestamp(UNITS[unit])
}

/** The contract's name of an apache-arrow type, or its own description where frames have none. */
export function typeName(t: DataType): string {
  const s = String(t)
  for (const [name, make] of Object.entries(MAKERS)) if (String(make()) === s) return name
  if (DataType.isTimestamp(t) && !t.timezone) return `timestamp[${Object.keys(UNITS).find((u) => UNITS[u] === t.unit)}]`
  return s
}

/** A schema as the user gives it (`{ name: type }`), checked, as the core's FieldSpecs. */
export function fieldsOf(schema: unknown, field: string, what: string): FieldSpec[] {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema) || Object.keys(schema).length === 0) {
    throw new ArgumentError([{ field, value: schema, allowed: "an object of column names to types, e.g. { id: 'int64', name: 'utf8' }" }], what)
  }
  return Object.entries(schema).map(([name, type]) => {
    if (typeof type !== 'string' || arrowType(type) === undefined) throw new ArgumentError([{ field: `${field}.${name}`, value: type, allowed: `a type: ${TYPE_NAMES}` }], what)
    return { name, type, nullable: true }
  })
}

const describe = (t: Table): string => t.schema.fields.map((f) => `${f.name}: ${typeName(f.type)}`).join(', ')

/**
 * Partitions whose columns were known only when they ran (mapBatches or
 * toFrame without a schema) must agree to make one table: empty ones are
 * left out, a disagreement is ERR_SPILLWAY_FRAME naming both.
 */
export function sameColumns(tables: Table[]): Table[] {
  const full = tables.filter((t) => t.numRows > 0)
  if (full.length === 0) return tables.slice(0, 1)
  const first = describe(full[0])
  const odd = full.findIndex((t) => describe(t) !== first)
  if (odd >= 0) {
    throw new SpillwayError('ERR_SPILLWAY_FRAME', `the partitions' columns differ: { ${describe(full[odd])} } against the first's { ${first} }; give mapBatches or toFrame a schema so that every partition has the same`, {})
  }
  return full
}
