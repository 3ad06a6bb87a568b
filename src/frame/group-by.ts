// A groupBy's graph, by one of two methods. 'tree' (Dask's tree reduction):
// each partition aggregates alone, the partial states merge in levels of
// `splitEvery`, and the last task(s) read every state of the level before —
// few tasks, the right choice where the groups are few. 'shuffle' (Dask's
// shuffle-based groupBy, DataFusion's repartitioned aggregate): each
// partition's states (or its rows, where a sample shows the keys barely
// repeat) go by key hash through the frame shuffle to `splitOut` collects,
// each merging only its own groups — no task holds more than its share of
// them, so a groupBy whose groups outgrow a worker's memory finishes.

import { ArgumentError } from '../base/errors'
import { hashOf } from '../bag/graph'
import { upstreamOf, type Upstream } from '../bag/upstream'
import type { AggSpecData, FieldSpec } from '../wire/frame'
import { positiveInt, type AggOptions } from './agg-options'
import { Aggregate, Expr } from './expr'
import { checkExplodes } from './expr-types'
import { Frame, GroupBy } from './frame'
import { aggregateType, fieldOf } from './schema'
import type { AggOf, ColumnOf } from './typing'
import { combineTaskCount, combineTasks, frameTask } from './graph'
import { frameShuffled, maxOutputsFor } from './shuffle'
import { planOf, recorded } from './plan/node'

/** DataFusion's skip-partial-aggregation figures: past 100 000 rows, more than 0.8 groups per row sends rows. */
export const SKIP_RATIO = 0.8
export const PROBE_ROWS = 100_000

const METHODS = ['auto', 'tree', 'shuffle']

export interface AggGraph {
  /** The output partitions' keys, in order. */
  keys: string[]
  upstream: Upstream
}

/** The tasks of `spec` over `f`, by the method `options` pick. */
export function aggGraph(f: Frame, spec: AggSpecData, options: AggOptions): AggGraph {
  const method = options.method ?? 'auto'
  if (!METHODS.includes(method)) throw new ArgumentError([{ field: 'options.method', value: method, allowed: METHODS.join(', ') }], 'agg')
  if (method === 'shuffle' && spec.keys.length === 0) throw new ArgumentError([{ field: 'options.method', value: method, allowed: "'tree' or 'auto' for an aggregate over every row (one group)" }], 'agg')
  const { shuffled, splitEvery, splitOut } = aggStrategy(f.npartitions, spec.keys.length, options)
  return shuffled ? shuffleGraph(f, spec, splitOut) : treeGraph(f, spec, splitEvery, splitOut)
}

/** The method `options` pick for `npartitions` inputs (frame.explain() says it). */
export function aggStrategy(npartitions: number, keys: number, options: AggOptions): { shuffled: boolean; splitEvery: number; splitOut: number } {
  const method = options.method ?? 'auto'
  const splitEvery = positiveInt(options.splitEvery, 'options.splitEvery', 'agg', 8, 2)
  const shuffled = keys > 0 && (method === 'shuffle' || (method === 'auto' && npartitions > splitEvery))
  // By default a shuffle has as many outputs as inputs, as many as a client can plan (shuffle.ts).
  const splitOut = positiveInt(options.splitOut, 'options.splitOut', 'agg', shuffled ? Math.min(Math.max(1, npartitions), maxOutputsFor(npartitions)) : 1)
  return { shuffled, splitEvery, splitOut }
}

function treeGraph(f: Frame, spec: AggSpecData, splitEvery: number, splitOut: number): AggGraph {
  const name = `group-by-${hashOf(f.name, spec, splitOut, splitEvery)}`
  const partials = f.parts.map((p, i) => frameTask('frame.partition', `${name}-part-${i}`, 'group-by-part', { source: p.source, schema: [...f.sourceFields], steps: [...f.steps], partial: spec }, p.deps, false))
  const keys = combineTasks(name, partials.map((t) => t.key), spec, splitEvery, splitOut).keys
  const make = () => [...f.upstream(), ...partials, ...combineTasks(name, partials.map((t) => t.key), spec, splitEvery, splitOut).tasks]
  return { keys, upstream: upstreamOf(make, f.upstream.count + partials.length + combineTaskCount(partials.length, splitEvery, splitOut)) }
}

function shuffleGraph(f: Frame, spec: AggSpecData, splitOut: number): AggGraph {
  const agg = { agg: spec, skipRatio: SKIP_RATIO, probeRows: PROBE_ROWS }
  return frameShuffled('group-by', [{ frame: f, by: { kind: 'hash', keys: spec.keys }, agg }], splitOut, { kind: 'agg', agg: spec })
}

declare module './frame' {
  interface GroupBy<S = any, K extends string = string> {
    /**
     * One row per group: its keys, then each aggregate under its name. Each
     * input partition aggregates alone first; only the partial states cross
     * between workers, merged in a tree or sent by key hash through the frame
     * shuffle (`options.method`, see group-by.ts).
     */
    agg<A extends Record<string, Aggregate<any, ColumnOf<S>>>>(aggregates: A, options?: AggOptions): Frame<AggOf<S, K, A>>
  }
}

/**
 * Aggregates of expressions become aggregates of columns: each expression
 * computed first as a column under a name no column has (in the same fused
 * step as the partition's other work).
 */
function exprsAsColumns(f: Frame, entries: [string, Aggregate][]): { frame: Frame; entries: [string, Aggregate][] } {
  const added: Record<string, Expr> = {}
  let i = 0
  const free = () => {
    let n: string
    do n = `__agg_${i++}`
    while (f.columns.includes(n))
    return n
  }
  const out = entries.map(([name, a]): [string, Aggregate] => {
    if (!(a instanceof Aggregate) || a.expr === undefined) return [name, a]
    checkExplodes(a.expr, 'agg', false)
    const column = free()
    added[column] = new Expr(a.expr)
    return [name, new Aggregate(a.func, column)]
  })
  return Object.keys(added).length === 0 ? { frame: f, entries } : { frame: f.withColumns(added), entries: out }
}

GroupBy.prototype.agg = function (this: GroupBy, aggregates: Record<string, Aggregate>, options: AggOptions = {}): Frame {
  const given = Object.entries(aggregates ?? {})
  if (given.length === 0) throw new ArgumentError([{ field: 'aggregates', value: aggregates, allowed: "an object of names to aggregates, e.g. { n: count(), total: sum('x') }" }], 'agg')
  const { frame: f, entries } = exprsAsColumns(this.frame, given)
  const fields: FieldSpec[] = this.keys.map((k) => ({ ...fieldOf(k, f.fields, 'groupBy'), nullable: true }))
  for (const [name, a] of entries) {
    if (!(a instanceof Aggregate)) throw new ArgumentError([{ field: `aggregates.${name}`, value: typeof a, allowed: 'count(), sum, mean, min, max, nUnique, first, last, std or var of a column or an expression' }], 'agg')
    if (fields.some((x) => x.name === name)) throw new ArgumentError([{ field: `aggregates.${name}`, value: name, allowed: 'a name that is not a key nor another aggregate' }], 'agg')
    fields.push({ name, type: aggregateType(a, f.fields, 'agg'), nullable: a.func !== 'count' })
  }
  const spec: AggSpecData = { keys: this.keys, aggs: entries.map(([name, a]) => ({ name, func: a.func, ...(a.column === undefined ? {} : { column: a.column }) })) }
  const { keys, upstream } = aggGraph(f, spec, options ?? {})
  const parts = keys.map((k) => ({ source: { kind: 'inputs' as const }, deps: [k] }))
  const aggs = given.map(([name, a]) => ({ name, func: a.func, ...(a.column === undefined ? {} : { column: a.column }), ...(a.expr === undefined ? {} : { expr: a.expr }) }))
  return recorded(new Frame('group-by', parts, fields, [], fields, upstream), { op: 'aggregate', input: planOf(this.frame), keys: this.keys, aggs, options: options ?? {} })
}
