// The column types of a bag's items for bag.toFrame without a schema:
// scalars as before (numbers float64, bigints int64, strings utf8, booleans
// bool, Dates timestamp[ms]), arrays as list<item>, plain objects as structs
// whose keys merge across items, unified as readNdjson unifies a file's
// values (null fits anything, lists unify their items, structs their keys).
// Inferred here in JavaScript rather than by writing the items as NDJSON for
// the core's reader: the items are JS values already, NDJSON would lose
// bigints and Dates and read whole numbers as int64 where the flat path
// makes float64, and the builder below takes nested values as they are.

import { Bool, Field, Float64, Int64, List, Struct, TimestampMillisecond, Utf8, type DataType } from 'apache-arrow'
import { ownTaskError } from '../../../base/errors'

export type Kind = { t: 'null' } | { t: 'float64' | 'int64' | 'utf8' | 'bool' | 'timestamp[ms]' } | { t: 'list'; item: Kind } | { t: 'struct'; fields: Map<string, Kind> }

const SCALAR: Record<string, Kind['t']> = { number: 'float64', bigint: 'int64', string: 'utf8', boolean: 'bool' }

export function kindName(k: Kind): string {
  if (k.t === 'list') return `list<${kindName(k.item)}>`
  if (k.t === 'struct') return `struct<${[...k.fields].map(([n, f]) => `${JSON.stringify(n)}: ${kindName(f)}`).join(', ')}>`
  return k.t
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null)

/** Where a value sits and what to do, for the errors below. */
export interface Place {
  column: string
  row: number
  partition: number
}

function fail(place: Place, path: string, message: string): never {
  throw ownTaskError('ERR_SPILLWAY_FRAME', `toFrame: column ${JSON.stringify(path)}, item ${place.row} of partition ${place.partition} ${message}; give toFrame a schema, or make the values agree`, { column: path, row: place.row, partition: place.partition })
}

/** The kind of one value (`path`: its column, `.key` and `[]` below it). */
export function kindOf(v: unknown, place: Place, path: string): Kind {
  if (v === null || v === undefined) return { t: 'null' }
  if (v instanceof Date) return { t: 'timestamp[ms]' }
  const s = SCALAR[typeof v]
  if (s) return { t: s } as Kind
  if (Array.isArray(v)) return { t: 'list', item: v.reduce<Kind>((k, x) => unify(k, kindOf(x, place, `${path}[]`), place, `${path}[]`), { t: 'null' }) }
  if (isPlainObject(v)) return { t: 'struct', fields: new Map(Object.entries(v).map(([n, x]) => [n, kindOf(x, place, `${path}.${n}`)])) }
  return fail(place, path, `holds a ${(v as object)?.constructor?.name ?? typeof v}, which has no column type (numbers, bigints, strings, booleans, Dates, arrays and plain objects have)`)
}

/** The kind both values fit, or an error naming the field and the two types. */
export function unify(a: Kind, b: Kind, place: Place, path: string): Kind {
  if (a.t === 'null') return b
  if (b.t === 'null') return a
  if (a.t === 'list' && b.t === 'list') return { t: 'list', item: unify(a.item, b.item, place, `${path}[]`) }
  if (a.t === 'struct' && b.t === 'struct') {
    const fields = new Map(a.fields)
    for (const [n, k] of b.fields) fields.set(n, fields.has(n) ? unify(fields.get(n)!, k, place, `${path}.${n}`) : k)
    return { t: 'struct', fields }
  }
  if (a.t === b.t) return a
  return fail(place, path, `is a ${kindName(b)} where earlier items hold a ${kindName(a)}`)
}

/** Nested kinds as apache-arrow types (a column null throughout is utf8 inside a list or struct, as readNdjson's). */
export function arrowOf(k: Kind): DataType {
  switch (k.t) {
    case 'list':
      return new List(new Field('item', arrowOf(k.item), true))
    case 'struct':
      return new Struct([...k.fields].map(([n, f]) => new Field(n, arrowOf(f), true)))
    case 'null':
    case 'utf8':
      return new Utf8()
    case 'float64':
      return new Float64()
    case 'int64':
      return new Int64()
    case 'bool':
      return new Bool()
    default:
      return new TimestampMillisecond()
  }
}

/**
 * `v` with every key of its struct kinds present, missing and undefined as
 * null: apache-arrow's builders read a missing key of a struct as the
 * child's default (false, 0), not as null.
 */
export function filled(v: unknown, k: Kind): unknown {
  if (v === null || v === undefined) return null
  if (k.t === 'list') return (v as unknown[]).map((x) => filled(x, k.item))
  if (k.t === 'struct') return Object.fromEntries([...k.fields].map(([n, f]) => [n, filled((v as Record<string, unknown>)[n], f)]))
  return v
}
