// A frame: a lazily defined table in partitions, as Dask's DataFrame and
// Polars' LazyFrame. Each partition is Arrow record batches that the core of
// the worker holding it reads, filters and aggregates; they sit in the
// worker's SpillBuffer as IPC bytes. Steps pile up on the frame and run as
// one task per partition; a groupBy aggregates inside each partition first,
// then merges the partial states in a tree.

import { tableFromIPC, type Table } from 'apache-arrow'
import { ArgumentError } from '../base/errors'
import type { TaskSubmission } from '../scheduler/scheduler'
import type { AggSpecData, ExprData, FieldSpec, FrameSource, FrameStep, PartitionPlan } from '../wire/frame'
import { hashOf } from '../bag/graph'
import { NO_UPSTREAM, upstreamOf, type Upstream } from '../bag/upstream'
import { Aggregate, col, Expr } from './expr'
import { combineTaskCount, combineTasks, frameTask } from './graph'
import { aggregateType, fieldOf, outputName, typeOf } from './schema'
import { writeFrame, type ToParquetOptions } from './writers'
import type { Bag } from '../bag/bag'

export type { Table as FrameTable } from 'apache-arrow'

/** One partition before its steps: where its batches come from, and the tasks it reads. */
export interface FramePart {
  source: FrameSource
  deps: string[]
}

export interface AggOptions {
  /** Output partitions, each holding the groups whose key hash is its own (default 1). */
  splitOut?: number
  /** Partial states merged per task of the combine tree (default 8). */
  splitEvery?: number
}

const positiveInt = (v: unknown, field: string, what: string, dflt: number, least = 1): number => {
  if (v === undefined) return dflt
  if (!(Number.isSafeInteger(v) && (v as number) >= least)) throw new ArgumentError([{ field, value: v, allowed: `an integer ≥ ${least}` }], what)
  return v as number
}

export class Frame {
  readonly name: string

  constructor(
    /** The label keys start with: the reader's or the last operation's name. */
    readonly label: string,
    readonly parts: readonly FramePart[],
    /** The columns the parts' source gives. */
    readonly sourceFields: readonly FieldSpec[],
    readonly steps: readonly FrameStep[] = [],
    /** The columns after the steps. */
    readonly fields: readonly FieldSpec[] = sourceFields,
    readonly upstream: Upstream = NO_UPSTREAM,
  ) {
    this.name = `${label}-${hashOf({ parts, sourceFields, steps })}`
  }

  /** Column names to types ('int64', 'utf8', …), in order: known before anything runs. */
  get schema(): Record<string, string> {
    return Object.fromEntries(this.fields.map((f) => [f.name, f.type]))
  }

  get columns(): string[] {
    return this.fields.map((f) => f.name)
  }

  get npartitions(): number {
    return this.parts.length
  }

  /** A part that is another task's output as it is needs no task of its own. */
  #passThrough(p: FramePart): boolean {
    return this.steps.length === 0 && p.source.kind === 'inputs' && p.deps.length === 1
  }

  /** Partition keys, in order. */
  keys(): string[] {
    return this.parts.map((p, i) => (this.#passThrough(p) ? p.deps[0] : `${this.name}-${i}`))
  }

  taskCount(): number {
    return this.upstream.count + this.parts.filter((p) => !this.#passThrough(p)).length
  }

  #plan(p: FramePart, partial?: AggSpecData): PartitionPlan {
    return { source: p.source, schema: [...this.sourceFields], steps: [...this.steps], ...(partial ? { partial } : {}) }
  }

  /** Every task this frame's partitions need, upstream first. */
  tasks(hold = true): TaskSubmission[] {
    const own = this.parts.flatMap((p, i) => (this.#passThrough(p) ? [] : [frameTask('frame.partition', `${this.name}-${i}`, this.label, this.#plan(p), p.deps, hold)]))
    return [...this.upstream(), ...own]
  }

  #with(step: FrameStep, fields: FieldSpec[], label: string): Frame {
    return new Frame(label, this.parts, this.sourceFields, [...this.steps, step], fields, this.upstream)
  }

  /** The rows where `predicate` is true (null counts as false, as SQL's WHERE). */
  filter(predicate: Expr): Frame {
    if (!(predicate instanceof Expr)) throw new ArgumentError([{ field: 'predicate', value: typeof predicate, allowed: "an expression, e.g. col('x').gt(1)" }], 'filter')
    const t = typeOf(predicate.data, this.fields, 'filter')
    if (t !== 'bool') throw new ArgumentError([{ field: predicate.toString(), value: t, allowed: 'a boolean expression' }], 'filter')
    return this.#with({ kind: 'filter', predicate: predicate.data }, [...this.fields], 'filter')
  }

  /** These columns (names, or expressions with a name), in this order. */
  select(...columns: (string | Expr)[]): Frame {
    if (columns.length === 0) throw new ArgumentError([{ field: 'columns', value: '(none)', allowed: 'at least one column name or expression' }], 'select')
    const exprs: ExprData[] = columns.map((c, i) => {
      if (c instanceof Expr) return c.data
      if (typeof c === 'string') return col(c).data
      throw new ArgumentError([{ field: `columns[${i}]`, value: c, allowed: 'a column name or an expression' }], 'select')
    })
    const fields = exprs.map((e) => ({ name: outputName(e, 'select'), type: typeOf(e, this.fields, 'select'), nullable: true }))
    const dup = fields.find((f, i) => fields.findIndex((g) => g.name === f.name) !== i)
    if (dup) throw new ArgumentError([{ field: 'columns', value: dup.name, allowed: 'each output name once (rename one with .alias)' }], 'select')
    return this.#with({ kind: 'select', exprs }, fields, 'select')
  }

  /** Groups by `keys` (any number; nulls a group of their own); `.agg({...})` gives one row per group. */
  groupBy(...keys: (string | string[])[]): GroupBy {
    const flat = keys.flat()
    if (flat.length === 0 || !flat.every((k) => typeof k === 'string')) throw new ArgumentError([{ field: 'keys', value: flat, allowed: 'one or more column names' }], 'groupBy')
    for (const k of flat) fieldOf(k, this.fields, 'groupBy')
    return new GroupBy(this, flat)
  }

  /** Writes each partition to `pattern` ('*' its index) as Parquet (default zstd); `client.compute` of the result writes and gives the paths. */
  toParquet(pattern: string, options: ToParquetOptions = {}): Bag<string> {
    return writeFrame(this, pattern, 'parquet', 'toParquet', options)
  }
  /** As toParquet, as CSV with a header (flat columns only). */
  toCsv(pattern: string): Bag<string> {
    return writeFrame(this, pattern, 'csv', 'toCsv')
  }
  /** As toParquet, one JSON object a line. */
  toNdjson(pattern: string): Bag<string> {
    return writeFrame(this, pattern, 'ndjson', 'toNdjson')
  }
  /** As toParquet, Arrow IPC files (Feather v2; '.arrow'). */
  toArrowIpc(pattern: string): Bag<string> {
    return writeFrame(this, pattern, 'ipc', 'toArrowIpc')
  }
}

export class GroupBy {
  constructor(
    readonly frame: Frame,
    readonly keys: string[],
  ) {}

  /**
   * One row per group: its keys, then each aggregate under its name. Each
   * input partition aggregates alone first; only the partial states are
   * merged (a tree), so the data crosses between workers already reduced.
   */
  agg(aggregates: Record<string, Aggregate>, options: AggOptions = {}): Frame {
    const f = this.frame
    const entries = Object.entries(aggregates ?? {})
    if (entries.length === 0) throw new ArgumentError([{ field: 'aggregates', value: aggregates, allowed: "an object of names to aggregates, e.g. { n: count(), total: sum('x') }" }], 'agg')
    const fields: FieldSpec[] = this.keys.map((k) => ({ ...fieldOf(k, f.fields, 'groupBy'), nullable: true }))
    for (const [name, a] of entries) {
      if (!(a instanceof Aggregate)) throw new ArgumentError([{ field: `aggregates.${name}`, value: typeof a, allowed: 'count(), sum(col), mean(col), min(col) or max(col)' }], 'agg')
      if (fields.some((x) => x.name === name)) throw new ArgumentError([{ field: `aggregates.${name}`, value: name, allowed: 'a name that is not a key nor another aggregate' }], 'agg')
      fields.push({ name, type: aggregateType(a, f.fields, 'agg'), nullable: a.func !== 'count' })
    }
    const splitOut = positiveInt(options.splitOut, 'options.splitOut', 'agg', 1)
    const splitEvery = positiveInt(options.splitEvery, 'options.splitEvery', 'agg', 8, 2)
    const spec: AggSpecData = { keys: this.keys, aggs: entries.map(([name, a]) => ({ name, func: a.func, ...(a.column === undefined ? {} : { column: a.column }) })) }
    const name = `group-by-${hashOf(f.name, spec, splitOut, splitEvery)}`
    const partials = f.parts.map((p, i) => frameTask('frame.partition', `${name}-part-${i}`, 'group-by-part', { source: p.source, schema: [...f.sourceFields], steps: [...f.steps], partial: spec }, p.deps, false))
    const outKeys = combineTasks(name, partials.map((t) => t.key), spec, splitEvery, splitOut).keys
    const make = () => [...f.upstream(), ...partials, ...combineTasks(name, partials.map((t) => t.key), spec, splitEvery, splitOut).tasks]
    const upstream = upstreamOf(make, f.upstream.count + partials.length + combineTaskCount(partials.length, splitEvery, splitOut))
    const parts = outKeys.map((k) => ({ source: { kind: 'inputs' as const }, deps: [k] }))
    return new Frame('group-by', parts, fields, [], fields, upstream)
  }
}

/** The partitions' IPC bytes as one apache-arrow Table, in order. */
export function tableOf(parts: unknown[]): Table {
  const tables = parts.map((p) => tableFromIPC(p as Uint8Array))
  return tables.length === 1 ? tables[0] : tables[0].concat(...tables.slice(1))
}
