// Operations over a whole frame: lazy scalars (`await client.compute(
// frame.count())` is a number), describe's aggregates and its table, and
// head/tail, which compute partitions one at a time from the needed end and
// stop once they hold n rows. Frame builds them (frame.ts); this file knows
// a frame only by the little it uses, so the two do not import each other.

import { tableFromIPC, type Table } from 'apache-arrow'
import { ArgumentError } from '../base/errors'
import { BagItem } from '../bag/bag'
import type { Upstream } from '../bag/upstream'
import type { FieldSpec, FrameStep } from '../wire/frame'
import { count, max, mean, min, std, type Aggregate } from './expr'
import { isNumeric } from './expr-types'
import { optimized } from './plan/node'

/** A one-row frame of aggregates, as the scalar reads it. */
interface OneRow {
  readonly name: string
  readonly upstream: Upstream
  keys(): string[]
}

/** The one-row frame's `value` as a lazy scalar: a number (int64 too), null, or first/last's value. */
export function scalarOf<T>(one: OneRow, func: string): BagItem<T> {
  return new BagItem<T>(`${func}-${one.name}`, one.upstream, one.keys()[0], (v) => {
    const x = tableFromIPC(v as Uint8Array).getChild('value')?.get(0) ?? null
    return (typeof x === 'bigint' ? Number(x) : x) as T
  })
}

/** describe's aggregates over the numeric columns, the columns, and the fields of its table. */
export function describePlan(fields: readonly FieldSpec[]): { aggs: Record<string, Aggregate>; columns: string[]; out: FieldSpec[] } {
  const columns = fields.filter((x) => isNumeric(x.type)).map((x) => x.name)
  if (columns.length === 0) throw new ArgumentError([{ field: 'columns', value: fields.map((f) => `${f.name}: ${f.type}`), allowed: 'at least one numeric column to describe' }], 'describe')
  const aggs: Record<string, Aggregate> = {}
  columns.forEach((c, i) => Object.assign(aggs, { [`${i}_count`]: count(c), [`${i}_rows`]: count(), [`${i}_mean`]: mean(c), [`${i}_std`]: std(c), [`${i}_min`]: min(c), [`${i}_max`]: max(c) }))
  const out: FieldSpec[] = [{ name: 'statistic', type: 'utf8', nullable: false }, ...columns.map((name) => ({ name, type: 'float64', nullable: true }))]
  return { aggs, columns, out }
}

/** A frame as head/tail use it: partition i alone, with one more step. */
export interface Sliceable<F> {
  readonly npartitions: number
  onePartition(i: number, step: FrameStep): F
  /** The first n rows as one frame of their own, where the frame knows a cheaper way than its partitions in order (sortBy's top-n). */
  topN?(n: number): F | undefined
  /** The frame's optimized plan, as text. */
  explain?(): string
}

interface Computes<F> {
  compute(f: F): Promise<Table>
}

/** A frame's first or last n rows: `client.compute(frame.head(n))` is a Table, computed from as few partitions as hold them. */
export class FrameSlice<F> {
  constructor(
    readonly frame: Sliceable<F>,
    readonly n: number,
    readonly fromEnd: boolean,
  ) {
    if (!(Number.isSafeInteger(n) && n >= 0)) throw new ArgumentError([{ field: 'n', value: n, allowed: 'an integer ≥ 0' }], fromEnd ? 'tail' : 'head')
  }

  /** The plan `client.compute` runs for this slice: the frame's, under how its rows are taken. */
  explain(): string {
    // As client.compute runs it: the optimized frame, whose top may be a sort where filters moved below it.
    const f = optimized(this.frame as unknown as { fields: readonly FieldSpec[] }) as unknown as Sliceable<F>
    const how = this.fromEnd ? 'the last partitions first, until they hold them' : f.topN?.(this.n) ? "each partition's first rows by the sort's keys (top-n), then one merge" : 'the first partitions, until they hold them'
    const plan = this.frame.explain?.() ?? ''
    return `${this.fromEnd ? 'tail' : 'head'} ${this.n}: ${how}\n${plan.replace(/^/gm, '  ')}`
  }

  async run(client: Computes<F>): Promise<Table> {
    const top = this.fromEnd ? undefined : this.frame.topN?.(this.n)
    if (top !== undefined) return client.compute(top)
    const order = Array.from({ length: this.frame.npartitions }, (_, i) => i)
    if (this.fromEnd) order.reverse()
    const got: Table[] = []
    let rows = 0
    for (const i of order) {
      if (rows >= this.n && got.length > 0) break
      // Each partition's task keeps n rows at most: only those cross to the client.
      const t = await client.compute(this.frame.onePartition(i, { kind: this.fromEnd ? 'tail' : 'head', n: this.n }))
      got.push(t)
      rows += t.numRows
    }
    if (this.fromEnd) got.reverse()
    const all = got.length === 1 ? got[0] : got[0].concat(...got.slice(1))
    return this.fromEnd ? all.slice(Math.max(0, all.numRows - this.n)) : all.slice(0, this.n)
  }
}
