// A frame's partitions through JavaScript: mapBatches (the user's function
// over each partition as an apache-arrow Table, on the workers), toBag and
// bag.toFrame, and the persisted frame a client holds. Each is one task per
// partition over the partition's IPC bytes (or a bag partition's items),
// after the tasks that make them.

import { ArgumentError } from '../base/errors'
import { Bag, type BagOwner } from '../bag/bag'
import { hashOf } from '../bag/graph'
import { stepFn } from '../bag/options'
import { upstreamOf } from '../bag/upstream'
import type { TaskSubmission } from '../scheduler/scheduler'
import type { FieldSpec } from '../wire/frame'
import type { FromItemsSpec, MapBatchesSpec, ToBagSpec } from '../wire/frame-js'
import { nativeFunction, type TaskFunction } from '../wire/functions'
import { fieldsOf } from '../wire/arrow-types'
import { Frame, type ColumnTypes } from './frame'
import { optimized } from './plan/node'
import type { Given, TableOf } from './typing'
import type { TaskFn } from '../futures/typing'
import type * as Arrow from 'apache-arrow'

export interface MapBatchesOptions<T extends ColumnTypes = any> {
  /**
   * The output's columns, `{ name: type }`: known before anything runs (so
   * later steps are checked), and each result checked against it. Without
   * it the columns are known only once it runs: steps that name columns
   * (filter, select, groupBy) need it.
   */
  schema?: T
}

export interface ToBagOptions {
  /**
   * int64 and uint64 values as `number` (default; a value past
   * Number.MAX_SAFE_INTEGER fails its partition, naming it) or `bigint`.
   */
  int64?: 'number' | 'bigint'
}

/** mapBatches' function: the partition as a Table (typed where the frame's columns are known) and the apache-arrow module, to a Table. */
export type BatchFn<S = any> = TaskFn<(table: TableOf<S>, arrow: typeof Arrow) => Arrow.Table | Promise<Arrow.Table>>

type Op = 'frame.mapBatches' | 'frame.toBag' | 'frame.fromItems'

function jsTask(op: Op, key: string, group: string, spec: MapBatchesSpec | ToBagSpec | FromItemsSpec, input: string): TaskSubmission {
  return { key, task: { fn: 'call', func: nativeFunction(op, group), args: [spec, null], deps: [{ key: input, path: [1] }] }, expectedBytes: 1, deps: [input], group, hold: false }
}

/** Tasks `make(i, key)` over each of `inputs` (the partition keys of `from`, after its tasks). */
function over(from: Frame | Bag<any>, name: string, make: (i: number, input: string) => TaskSubmission) {
  const inputs = from.keys()
  const own = () => inputs.map((k, i) => make(i, k))
  const upstream = upstreamOf(() => [...from.tasks(false), ...own()], from.taskCount() + inputs.length)
  const parts = inputs.map((_, i) => ({ source: { kind: 'inputs' as const }, deps: [`${name}-${i}`] }))
  return { upstream, parts }
}

export function mapBatchesOf(f: Frame, fn: TaskFunction, options: MapBatchesOptions = {}): Frame {
  if (options === null || typeof options !== 'object') throw new ArgumentError([{ field: 'options', value: options, allowed: 'an object { schema? }' }], 'mapBatches')
  const call = stepFn(fn, [], 'fn')
  const schema = options.schema === undefined ? undefined : fieldsOf(options.schema, 'options.schema', 'mapBatches')
  const name = `map-batches-${hashOf(f.name, call, schema ?? null)}`
  const { upstream, parts } = over(f, name, (index, k) => jsTask('frame.mapBatches', `${name}-${index}`, 'map-batches', { index, call, ...(schema ? { schema } : {}) }, k))
  // Unknown columns are no columns: a step naming one says to give the schema (schema.ts columnNotFound).
  return new Frame('map-batches', parts, schema ?? [], [], schema ?? [], upstream)
}

export function toBagOf<T>(f: Frame, options: ToBagOptions = {}): Bag<T> {
  const int64 = options?.int64 ?? 'number'
  if (int64 !== 'number' && int64 !== 'bigint') throw new ArgumentError([{ field: 'options.int64', value: int64, allowed: "'number' (default) or 'bigint'" }], 'toBag')
  const name = `to-bag-${hashOf(f.name, int64)}`
  const { upstream, parts } = over(f, name, (index, k) => jsTask('frame.toBag', `${name}-${index}`, 'to-bag', { index, int64 }, k))
  return new Bag<T>('to-bag', parts, [], upstream)
}

export function toFrameOf(b: Bag<any>, schema?: Record<string, string>): Frame {
  const fields: FieldSpec[] | undefined = schema === undefined ? undefined : fieldsOf(schema, 'schema', 'toFrame')
  const name = `from-bag-${hashOf(b.name, fields ?? null)}`
  const { upstream, parts } = over(b, name, (index, k) => jsTask('frame.fromItems', `${name}-${index}`, 'from-bag', { index, ...(fields ? { schema: fields } : {}) }, k))
  return new Frame('from-bag', parts, fields ?? [], [], fields ?? [], upstream)
}

const owners = new WeakMap<Frame, BagOwner>()

/** A frame whose partitions are `f`'s tasks' values (after persist), let go of by `owner`. */
export function materializedOf(f: Frame, owner?: BagOwner): Frame {
  const parts = f.keys().map((k) => ({ source: { kind: 'inputs' as const }, deps: [k] }))
  const m = new Frame(f.label, parts, f.fields, [], f.fields, upstreamOf(() => f.tasks(false), f.taskCount()))
  if (owner) owners.set(m, owner)
  return m
}

export function releaseOf(f: Frame): void {
  const o = owners.get(f)
  owners.delete(f)
  o?.release(f.parts.flatMap((p) => p.deps))
}

// The methods join Frame and Bag here, not in their files: frame/ sits above
// bag/ (a bag cannot import frames), and frame.ts stays free of a circle
// with this file. Loaded with the package (frame/api.ts).
declare module './frame' {
  interface Frame<S = any> {
    /**
     * `fn(table, arrow)` on the workers over each partition as an
     * apache-arrow Table (`arrow`: the apache-arrow module, for a
     * self-contained function to build tables with), giving a Table or a
     * Promise of one.
     */
    mapBatches<const T extends ColumnTypes = any>(fn: BatchFn<S>, options?: MapBatchesOptions<T>): Frame<Given<T>>
    /** The rows as plain objects, one bag partition per frame partition. */
    toBag<T = Record<string, unknown>>(options?: ToBagOptions): Bag<T>
    /** A frame whose partitions are this one's tasks' values (client.persist's). */
    materialized(owner?: BagOwner): Frame<S>
    /** Lets go of the partitions a persist holds. */
    release(): void
  }
}
declare module '../bag/bag' {
  interface Bag<T> {
    /**
     * The items (plain objects) as a frame's rows: the columns of `schema`
     * (`{ name: type }`), or inferred from each partition's items (numbers
     * float64, bigints int64, strings utf8, booleans bool, Dates
     * timestamp[ms]); partitions that infer differently fail the compute.
     */
    toFrame<const S extends ColumnTypes = any>(schema?: S): Frame<Given<S>>
  }
}

Frame.prototype.mapBatches = function (this: Frame, fn: BatchFn, options?: MapBatchesOptions) {
  return mapBatchesOf(optimized(this), fn as TaskFunction, options)
}
Frame.prototype.toBag = function <T>(this: Frame, options?: ToBagOptions) {
  return toBagOf<T>(optimized(this), options)
}
Frame.prototype.materialized = function (this: Frame, owner?: BagOwner) {
  return materializedOf(this, owner)
}
Frame.prototype.release = function (this: Frame) {
  releaseOf(this)
}
Bag.prototype.toFrame = function (this: Bag<any>, schema?: Record<string, string>) {
  return toFrameOf(this, schema)
}
