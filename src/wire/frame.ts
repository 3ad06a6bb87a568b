// Frame plans as they travel to a worker and into the core
// (crates/core/src/frame/plan.rs): plain data, hashed into task keys on the
// client, handed to the core as JSON.

export type CompareOp = 'eq' | 'neq' | 'gt' | 'gtEq' | 'lt' | 'ltEq'

export type ExprData =
  | { op: 'col'; name: string }
  | { op: 'lit'; value: number | string | boolean | null; type: 'int64' | 'float64' | 'utf8' | 'bool' | 'null' }
  | { op: CompareOp | 'and' | 'or'; left: ExprData; right: ExprData }
  | { op: 'not' | 'isNull' | 'isNotNull'; expr: ExprData }
  | { op: 'alias'; expr: ExprData; name: string }
  | { op: ArithOp; left: ExprData; right: ExprData }
  | { op: 'fillNull'; expr: ExprData; value: ExprData }
  | { op: 'cast'; expr: ExprData; type: string }
  | { op: 'round'; expr: ExprData; decimals: number }
  | { op: 'dtOffsetBy'; expr: ExprData; by: string; months: number; days: number; ms: number }
  | { op: 'strContains' | 'strSplit'; expr: ExprData; pattern: string; regex: boolean }
  | { op: 'strStartsWith'; expr: ExprData; prefix: string }
  | { op: 'strLower' | 'strUpper' | 'strLen' | 'explode'; expr: ExprData }
  | { op: 'strSlice'; expr: ExprData; offset: number; length?: number }
  | { op: 'dt'; expr: ExprData; part: DatePart }
  /** SQL's CASE WHEN: `then` where `cond` is true, else `otherwise`. */
  | { op: 'when'; cond: ExprData; then: ExprData; otherwise: ExprData }

export type ArithOp = 'plus' | 'minus' | 'multiplyBy' | 'divideBy' | 'modulo'
export type DatePart = 'year' | 'month' | 'day' | 'weekday' | 'hour' | 'minute' | 'second'

/** A column as the core describes it (crates/core/src/frame/types.rs). */
export interface FieldSpec {
  name: string
  type: string
  nullable: boolean
}

export interface CsvOptionsData {
  delimiter: string
  quote: string
  nullValues: string[]
  header: boolean
  encoding: 'utf8' | 'latin1'
}

/** Where a partition's batches come from: a block of a CSV file (the lines that begin in [start, end)), or its inputs' IPC. */
export type FrameSource =
  /** `exact`: [start, end) are record starts the client found (quoted values span lines), read as they are. */
  | { kind: 'csv'; path: string; start: number; end: number; size: number; mtimeMs: number; options: CsvOptionsData; exact?: true }
  | { kind: 'inputs' }
  /** Row groups of a Parquet file (size and mtimeMs key the task to the file's version), then those of `more` files, in order. */
  | { kind: 'parquet'; path: string; rowGroups: number[]; size: number; mtimeMs: number; more?: { path: string; rowGroups: number[]; size: number; mtimeMs: number }[] }
  /** The lines of an NDJSON file that begin in [start, end). */
  | { kind: 'ndjson'; path: string; start: number; end: number; size: number; mtimeMs: number }
  | { kind: 'text'; path: string; start: number; end: number; size: number; mtimeMs: number; column: string; encoding: 'utf8' | 'latin1'; more?: { path: string; size: number; mtimeMs: number }[] }

/** A `frame.write` task's plan (crates/core/src/frame/write.rs). */
export type FrameWritePlan = { path: string } & ({ format: 'parquet'; compression: string } | { format: 'csv' | 'ndjson' | 'ipc' })

/** One sort key: a column and its order (sortBy, the range shuffle, a top-n). */
export interface SortKeyData {
  name: string
  descending: boolean
  nullsLast: boolean
}

export type FrameStep =
  | { kind: 'filter'; predicate: ExprData }
  | { kind: 'select'; exprs: ExprData[] }
  | { kind: 'head' | 'tail'; n: number }
  | { kind: 'describe'; columns: string[] }
  /** The partition sorted (stable), its first `limit` rows only where given: sortBy().head(n)'s top-n. */
  | { kind: 'sort'; keys: SortKeyData[]; limit?: number }

export interface AggSpecData {
  keys: string[]
  aggs: { name: string; func: string; column?: string }[]
}

/** A `frame.partition` task's plan. */
export interface PartitionPlan {
  source: FrameSource
  schema: FieldSpec[]
  steps: FrameStep[]
  partial?: AggSpecData
}

/** A `frame.combine` task's plan: partial states merged, finished at the last level, split n ways by key hash. */
export interface CombinePlan {
  agg: AggSpecData
  final: boolean
  split?: [number, number]
}
