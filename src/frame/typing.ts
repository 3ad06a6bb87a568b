// Types only: a frame's columns as tsc sees them. `Frame<S>` carries a map
// of column names to the contract's type names ('int64', 'utf8', …) where
// they are known (a schema given, select of names, groupBy().agg), so column
// names are checked at build time and results are apache-arrow Tables with
// typed rows. Where they are not known S is `any`, and everything is as
// untyped as before.

import type * as arrow from 'apache-arrow'
import type { Aggregate } from './expr'

/** Column names to the contract's type names, e.g. `{ id: 'int64', city: 'utf8' }`. */
export type ColumnTypes = Record<string, string>

type IsAny<T> = 0 extends 1 & T ? true : false

/** A schema as given (`const`-inferred, so readonly) as a frame's S. */
export type Given<S> = IsAny<S> extends true ? any : { -readonly [K in keyof S]: S[K] }

/** The column names of S, or any string where S is not known. */
export type ColumnOf<S> = IsAny<S> extends true ? string : keyof S & string

interface ArrowTypes {
  null: arrow.Null
  bool: arrow.Bool
  int8: arrow.Int8
  int16: arrow.Int16
  int32: arrow.Int32
  int64: arrow.Int64
  uint8: arrow.Uint8
  uint16: arrow.Uint16
  uint32: arrow.Uint32
  uint64: arrow.Uint64
  float32: arrow.Float32
  float64: arrow.Float64
  utf8: arrow.Utf8
  date32: arrow.DateDay
  date64: arrow.DateMillisecond
  'timestamp[s]': arrow.TimestampSecond
  'timestamp[ms]': arrow.TimestampMillisecond
  'timestamp[us]': arrow.TimestampMicrosecond
  'timestamp[ns]': arrow.TimestampNanosecond
}

/** S as apache-arrow's TypeMap (a type name it does not know is any DataType). */
export type ArrowOf<S> = { [K in keyof S & string]: S[K] extends keyof ArrowTypes ? ArrowTypes[S[K]] : arrow.DataType }

/** The contract's name of an apache-arrow type, or string where it has none (a struct, a list): one name only where exactly one fits. */
type NameOfArrow<T> = { [N in keyof ArrowTypes]: [T] extends [ArrowTypes[N]] ? ([ArrowTypes[N]] extends [T] ? N : never) : never }[keyof ArrowTypes]
type OneName<N> = [N] extends [never] ? string : N

/** An apache-arrow TypeMap (a typed Table's columns) as a frame's S; any where the Table is not typed. */
export type NamesOf<T> = IsAny<T> extends true ? any : { [K in keyof T & string]: OneName<NameOfArrow<T[K]>> }

/** A frame's result: an apache-arrow Table, its rows typed where S is known. */
export type TableOf<S> = IsAny<S> extends true ? arrow.Table : arrow.Table<ArrowOf<S>>
export type BatchOf<S> = IsAny<S> extends true ? arrow.RecordBatch : arrow.RecordBatch<ArrowOf<S>>

/** S's columns `K` (any where S is not known). */
export type PickOf<S, K extends string> = IsAny<S> extends true ? any : { [P in K & keyof S]: S[P] }

/** The type an aggregate gives, as schema.ts aggregateType computes it. */
type AggType<F, C, S> = F extends 'count' | 'nUnique' ? 'int64' : F extends 'mean' | 'std' | 'var' ? 'float64' : C extends keyof S ? (F extends 'first' | 'last' ? S[C] : S[C] extends 'float32' | 'float64' ? 'float64' : 'int64') : string

/** groupBy(K).agg(A)'s columns: the keys, then each aggregate under its name. */
export type AggOf<S, K extends string, A> = IsAny<S> extends true ? any : Flat<{ [P in K & keyof S]: S[P] } & { [N in keyof A & string]: A[N] extends Aggregate<infer F, infer C> ? AggType<F, C, S> : string }>

type Flat<T> = { [P in keyof T]: T[P] }

