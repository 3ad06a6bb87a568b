// Runs a bag's tasks on the worker: a partition's items from its source,
// through the per-item steps fused into the task (streamed, no array per
// step), and into a reduction's per-partition step when it ends with one;
// and the aggregates of a reduction's tree.

import { ownTaskError, SpillwayError } from '../base/errors'
import type { AggregateSpec, CollectSpec, KeySpec, PartitionSpec, Reducer, SplitMarker, Step, StepFn } from '../wire/bag'
import type { FnDesc } from '../wire/functions'
import { KeyTable } from '../wire/key-equality'
import { refuseAsync } from './async-steps'
import { aggregate, keyOf, perPartition, type Fn, type Loaded } from './bag-reducers'
import { fusedSteps, isItemStep } from './fused-steps'
import { csvItems, parquetItems } from './tabular'
import { textPartition } from './text-blocks'
import { writeLines } from './text-writer'

export interface FunctionLoader {
  get(desc: FnDesc): Promise<Fn>
  /** Reads a shuffle output's shards (the worker's shuffle service); absent where there is none. */
  collect?(spec: CollectSpec, markers: SplitMarker[]): Promise<unknown[]>
  /** The worker's memory limit: what a file read whole may take is a share of it. */
  readonly memoryLimit?: number
}

/**
 * A step's function with its extra arguments, whose every result is checked
 * to be no Promise: steps run synchronously, item by item, so a Promise
 * would be kept as an item (a filter keeps everything, a sum concatenates).
 */
export function syncStep(fn: Fn, args: unknown[], desc: FnDesc, role: string): Fn {
  return (...a: unknown[]) => refuseAsync(args.length ? fn(...a, ...args) : fn(...a), desc, role)
}

/**
 * syncStep for the steps called once per item with the item alone (map,
 * filter, flatMap): no rest array per call, and a primitive result (a
 * line, a number, a boolean) is never a Promise, so it skips the check.
 */
function syncItemStep(fn: Fn, args: unknown[], desc: FnDesc, role: string): Fn {
  const checked = (r: unknown) => (r !== null && (typeof r === 'object' || typeof r === 'function') ? refuseAsync(r, desc, role) : r)
  return args.length ? (v: unknown) => checked(fn(v, ...args)) : (v: unknown) => checked(fn(v))
}

const ITEM_STEPS = new Set(['map', 'filter', 'flatMap'])

export async function loadStep(load: FunctionLoader, s: StepFn, role: string): Promise<Fn> {
  return (ITEM_STEPS.has(role) ? syncItemStep : syncStep)(await load.get(s.fn), s.args, s.fn, role)
}

export async function keyFunction(load: FunctionLoader, k: KeySpec, role = 'key'): Promise<(item: unknown) => unknown> {
  return keyOf(k, 'fn' in k ? await loadStep(load, k.fn, role) : undefined)
}

/** Each item with every item of the small side whose key is equal (and alone, as [item, undefined], for a left join). */
function* broadcastJoin(items: Iterable<unknown>, small: unknown[], leftKey: (v: unknown) => unknown, rightKey: (v: unknown) => unknown, how: 'inner' | 'left'): Iterable<unknown> {
  const byKey = new KeyTable<unknown[]>('join key')
  for (const r of small) {
    const k = rightKey(r)
    ;(byKey.find(k) ?? byKey.add(k, [])).value.push(r)
  }
  for (const l of items) {
    const rs = byKey.get(leftKey(l))
    if (rs) for (const r of rs) yield [l, r]
    else if (how === 'left') yield [l, undefined]
  }
}

function bound(fn: Fn, args: unknown[]): Fn {
  return args.length ? (...a: unknown[]) => fn(...a, ...args) : fn
}

function* applyStep(items: Iterable<unknown>, step: Exclude<Step, { op: 'write' | 'join-broadcast' }>, fn: Fn | undefined): Iterable<unknown> {
  switch (step.op) {
    case 'map':
      for (const v of items) yield fn!(v)
      return
    case 'filter':
      for (const v of items) if (fn!(v)) yield v
      return
    case 'flatMap':
      for (const v of items) yield* iterableOf(fn!(v), 'flatMap')
      return
    case 'pluck': {
      const f = step.field
      for (const v of items) yield (v as any)?.[f]
      return
    }
    case 'mapPartitions':
      yield* iterableOf(fn!(items), 'mapPartitions')
  }
}

/** What a flatMap or mapPartitions function returned, if it is an iterable of items. */
function iterableOf(out: unknown, op: string): Iterable<unknown> {
  if (out == null || typeof (out as any)[Symbol.iterator] !== 'function') {
    throw ownTaskError('ERR_SPILLWAY_TASK', `${op}' function returned ${out === null ? 'null' : typeof out}, not an iterable of items`)
  }
  return out as Iterable<unknown>
}

async function loadReducer(load: FunctionLoader, r: Reducer): Promise<Loaded> {
  const f: Loaded = {}
  if (r.op === 'foldBy' || r.op === 'sample' || (r.op === 'topk' && r.key)) {
    f.key = await keyFunction(load, r.key!, `${r.op === 'sample' ? 'sortBy' : r.op} key`)
  }
  if (r.op === 'foldBy') {
    f.binop = await loadStep(load, r.binop, 'foldBy binop')
    if (r.combine) f.combine = await loadStep(load, r.combine, 'foldBy combine')
  }
  if (r.op === 'custom') {
    // Awaited as the task's own value: a Promise from either is its result, not an item.
    f.perPartition = bound(await load.get(r.perPartition.fn), r.perPartition.args)
    f.aggregate = bound(await load.get(r.aggregate.fn), r.aggregate.args)
  }
  return f
}

async function sourceItems(load: FunctionLoader, spec: PartitionSpec, inputs: unknown[]): Promise<Iterable<unknown>> {
  const src = spec.source
  if (src.kind === 'shuffle') {
    if (!load.collect) throw ownTaskError('ERR_SPILLWAY_PROTOCOL', 'a shuffle output needs a worker with a shuffle service')
    return load.collect(src.collect, inputs as SplitMarker[])
  }
  if (src.kind === 'items') return src.items
  if (src.kind === 'inputs') return inputs.flatMap((v) => v as unknown[])
  if (src.kind === 'csv') return csvItems(src)
  if (src.kind === 'parquet') return parquetItems(src)
  // A text block is read whole, its lines made as the steps consume them (a block is at most `blocksize`).
  return textPartition(src, load.memoryLimit)
}

/** A partition's items as an array, or its reduction's partial. */
export async function runPartition(load: FunctionLoader, spec: PartitionSpec, ...inputs: unknown[]): Promise<unknown> {
  const fns = await Promise.all(spec.steps.map((s) => (s.op === 'pluck' || s.op === 'write' || s.op === 'join-broadcast' ? undefined : loadStep(load, s.call, s.op))))
  const reducer = spec.reduce ? await loadReducer(load, spec.reduce) : undefined
  const own = spec.broadcast ? inputs.slice(0, inputs.length - spec.broadcast) : inputs
  const extra = spec.broadcast ? inputs.slice(inputs.length - spec.broadcast) : []
  let items = await sourceItems(load, spec, own)
  if (spec.steps.length && spec.steps.every(isItemStep)) {
    items = fusedSteps(items, spec.steps, fns as ((v: unknown) => unknown)[])
    if (spec.reduce) return perPartition(spec.reduce, items, reducer!)
    return [...items]
  }
  for (const [i, s] of spec.steps.entries()) {
    // A write consumes the items before it: the next steps see its path.
    if (s.op === 'write') items = [await writeLines(s.pattern.replace('*', String(spec.index)), items, s.compression)]
    else if (s.op === 'join-broadcast') items = broadcastJoin(items, extra[s.input] as unknown[], await keyFunction(load, s.leftKey, 'join leftKey'), await keyFunction(load, s.rightKey, 'join rightKey'), s.how)
    else items = applyStep(items, s, fns[i])
  }
  if (spec.reduce) return perPartition(spec.reduce, items, reducer!)
  return Array.isArray(items) ? items : [...items]
}

/** One level of a reduction's tree: its inputs' partials combined. */
export async function runAggregate(load: FunctionLoader, spec: AggregateSpec, ...partials: unknown[]): Promise<unknown> {
  const f = await loadReducer(load, spec.reduce)
  return aggregate(spec.reduce, partials, spec.final, f)
}
