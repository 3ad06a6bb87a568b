// A frame: a lazily defined table in partitions, as Dask's DataFrame and
// Polars' LazyFrame. Each partition is Arrow record batches that the core of
// the worker holding it reads, filters and aggregates; they sit in the
// worker's SpillBuffer as IPC bytes. Steps pile up on the frame and run as
// one task per partition; a groupBy aggregates inside each partition first,
// then merges the partial states in a tree or through a shuffle (group-by.ts).

import { tableFromIPC, type Table } from 'apache-arrow'
import { sameColumns } from '../wire/arrow-types'
import { ArgumentError } from '../base/errors'
import type { TaskSubmission } from '../scheduler/scheduler'
import type { AggSpecData, ExprData, FieldSpec, FrameSource, FrameStep, PartitionPlan, SortKeyData } from '../wire/frame'
import type { BagItem } from '../bag/bag'
import { hashOf } from '../bag/graph'
import { NO_UPSTREAM, upstreamOf, type Upstream } from '../bag/upstream'
import { Aggregate, col, count, Expr, first, last, max, mean, min, nUnique, std, sum, variance } from './expr'
import { checkExplodes } from './expr-types'
import { coerced } from './coerce'
import { dropColumns, renameColumns, withColumnsOf } from './columns'
import { describePlan, FrameSlice, scalarOf } from './whole'
import { frameTask } from './graph'
import { explained, optimized, planOf, recorded } from './plan/node'
import type { AggOptions } from './agg-options'
import { aggregateType, fieldOf, outputName, typeOf } from './schema'
import type { AggOf, BatchOf, ColumnOf, PickOf, TableOf } from './typing'

export type { ColumnTypes } from './typing'
/** A frame's result: an apache-arrow Table, its rows typed where the frame's columns are known. */
export type FrameTable<S = any> = TableOf<S>
/** A frame's record batch, as client.iterate yields them. */
export type FrameBatch<S = any> = BatchOf<S>
export { FrameSlice } from './whole'

/** One partition before its steps: where its batches come from, and the tasks it reads. */
export interface FramePart {
  source: FrameSource
  deps: string[]
  /** Bytes its columns take in memory, where the reader knows them before reading (a Parquet footer's sizes). */
  bytes?: number
  /** Rows, where the reader knows them before reading (a Parquet footer's counts). */
  rows?: number
}

export { positiveInt, type AggOptions } from './agg-options'

/** `S`, for tsc only: column names to types where known (see typing.ts), else any. */
export class Frame<S = any> {
  declare readonly '~schema'?: S
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
    /** Where this frame is `input` sorted by `keys` (sortBy's output): head(n) takes a top-n instead. */
    readonly sortedFrom?: { input: Frame; keys: SortKeyData[] },
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
  filter(predicate: Expr<ColumnOf<S>>): Frame<S> {
    if (!(predicate instanceof Expr)) throw new ArgumentError([{ field: 'predicate', value: typeof predicate, allowed: "an expression, e.g. col('x').gt(1)" }], 'filter')
    checkExplodes(predicate.data, 'filter', false)
    const data = coerced(predicate.data, this.fields, 'filter', typeOf)
    const t = typeOf(data, this.fields, 'filter')
    if (t !== 'bool') throw new ArgumentError([{ field: predicate.toString(), value: t, allowed: 'a boolean expression' }], 'filter')
    return recorded(this.#with({ kind: 'filter', predicate: data }, [...this.fields], 'filter'), { op: 'filter', input: planOf(this), predicate: data })
  }

  /** These columns (names, or expressions with a name), in this order. */
  select<K extends ColumnOf<S>>(...columns: K[]): Frame<PickOf<S, K>>
  select(...columns: (ColumnOf<S> | Expr<ColumnOf<S>>)[]): Frame
  select(...columns: (string | Expr)[]): Frame {
    if (columns.length === 0) throw new ArgumentError([{ field: 'columns', value: '(none)', allowed: 'at least one column name or expression' }], 'select')
    const exprs: ExprData[] = columns.map((c, i) => {
      if (c instanceof Expr) return (checkExplodes(c.data, 'select'), coerced(c.data, this.fields, 'select', typeOf))
      if (typeof c === 'string') return col(c).data
      throw new ArgumentError([{ field: `columns[${i}]`, value: c, allowed: 'a column name or an expression' }], 'select')
    })
    const fields = exprs.map((e) => ({ name: outputName(e, 'select'), type: typeOf(e, this.fields, 'select'), nullable: true }))
    const dup = fields.find((f, i) => fields.findIndex((g) => g.name === f.name) !== i)
    if (dup) throw new ArgumentError([{ field: 'columns', value: dup.name, allowed: 'each output name once (rename one with .alias)' }], 'select')
    return recorded(this.#with({ kind: 'select', exprs }, fields, 'select'), { op: 'select', input: planOf(this), exprs })
  }

  /** These columns added, or replaced where the name is taken (in place). */
  withColumns(columns: Record<string, Expr>): Frame {
    return this.select(...withColumnsOf(this.fields, columns))
  }
  drop(...names: (string | string[])[]): Frame {
    return this.select(...dropColumns(this.fields, names.flat()))
  }
  /** Columns renamed, `{ old: 'new' }`, in place. */
  rename(names: Record<string, string>): Frame {
    return this.select(...renameColumns(this.fields, names))
  }
  /** Each distinct row once (rows of all columns equal, nulls equal to nulls). */
  distinct(options: AggOptions = {}): Frame {
    let n = '__n'
    while (this.columns.includes(n)) n = `_${n}`
    return (this as Frame).groupBy(...this.columns).agg({ [n]: count() }, options).select(...this.columns)
  }
  /** The first n rows: `await client.compute(frame.head(n))` is a Table, from as few partitions as hold them. */
  head(n = 5): FrameSlice<Frame> {
    return new FrameSlice<Frame>(this, n, false)
  }
  tail(n = 5): FrameSlice<Frame> {
    return new FrameSlice<Frame>(this, n, true)
  }
  /**
   * sortBy(keys).head(n) without the sort: each partition of the sorted
   * frame's input keeps its own first n rows, and one task takes the first n
   * of theirs (Polars' and DataFusion's top-k; ties keep the input order, as
   * the stable sort's). Undefined where this frame is not sortBy's output.
   */
  topN(n: number): Frame | undefined {
    const s = this.sortedFrom
    if (!s) return undefined
    const step: FrameStep = { kind: 'sort', keys: s.keys, limit: n }
    const partials = new Frame('top-n-part', s.input.parts, s.input.sourceFields, [...s.input.steps, step], [...s.input.fields], s.input.upstream)
    return new Frame('top-n', [{ source: { kind: 'inputs' }, deps: partials.keys() }], [...this.fields], [step], [...this.fields], upstreamOf(() => partials.tasks(false), partials.taskCount()))
  }
  /**
   * The plan `client.compute` runs, as text: this frame's methods after the
   * optimizer's rules (filters moved toward the readers, only the columns
   * needed read), each with the strategy chosen and why, and its partitions.
   */
  explain(): string {
    return explained(this)
  }
  /** Partition i alone with one more step (head/tail's unit of work). */
  onePartition(i: number, step: FrameStep): Frame {
    return new Frame(step.kind, [this.parts[i]], this.sourceFields, [...this.steps, step], [...this.fields], this.upstream)
  }
  /** count, null_count, mean, std, min, max of each numeric column, one row per statistic. */
  describe(): Frame {
    const { aggs, columns, out } = describePlan(this.fields)
    const one = this.agg(aggs)
    return new Frame('describe', one.parts, one.fields, [{ kind: 'describe', columns }], out, one.upstream)
  }
  /** Aggregates over every row: a one-row frame (a groupBy with no keys). */
  agg(aggregates: Record<string, Aggregate>): Frame {
    return new GroupBy(this, []).agg(aggregates)
  }
  #scalar<T>(a: Aggregate): BagItem<T> {
    return scalarOf<T>(optimized(this.agg({ value: a })), a.func)
  }
  /** Rows, as a lazy scalar: `await client.compute(frame.count())` is a number. */
  count(): BagItem<number> {
    return this.#scalar(count())
  }
  /** Lazy scalars over every row (null where no value is not null). */
  sum(column: string): BagItem<number | null> {
    return this.#scalar(sum(column))
  }
  mean(column: string): BagItem<number | null> {
    return this.#scalar(mean(column))
  }
  min(column: string): BagItem<number | null> {
    return this.#scalar(min(column))
  }
  max(column: string): BagItem<number | null> {
    return this.#scalar(max(column))
  }
  std(column: string): BagItem<number | null> {
    return this.#scalar(std(column))
  }
  var(column: string): BagItem<number | null> {
    return this.#scalar(variance(column))
  }
  nUnique(column: string): BagItem<number> {
    return this.#scalar(nUnique(column))
  }
  first(column: string): BagItem<unknown> {
    return this.#scalar(first(column))
  }
  last(column: string): BagItem<unknown> {
    return this.#scalar(last(column))
  }

  /** Groups by `keys` (any number; nulls a group of their own); `.agg({...})` gives one row per group. */
  groupBy<K extends ColumnOf<S>>(...keys: (K | K[])[]): GroupBy<S, K> {
    const flat = keys.flat()
    if (flat.length === 0 || !flat.every((k) => typeof k === 'string')) throw new ArgumentError([{ field: 'keys', value: flat, allowed: 'one or more column names' }], 'groupBy')
    for (const k of flat) fieldOf(k, this.fields, 'groupBy')
    return new GroupBy(this, flat)
  }
}

export class GroupBy<S = any, K extends string = string> {
  constructor(
    readonly frame: Frame<S>,
    readonly keys: string[],
  ) {}
  // agg joins GroupBy in group-by.ts: it plans through the shuffle, whose planner makes Frames (a circle from here).
}

/** The partitions' IPC bytes as one apache-arrow Table, in order. */
export function tableOf(parts: unknown[]): Table {
  const tables = sameColumns(parts.map((p) => tableFromIPC(p as Uint8Array)))
  return tables.length === 1 ? tables[0] : tables[0].concat(...tables.slice(1))
}
