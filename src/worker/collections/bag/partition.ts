// Runs a bag's tasks on the worker: a partition's items from its source,
// through the per-item steps fused into the task (streamed, no array per
// step), and into a reduction's per-partition step when it ends with one;
// and the aggregates of a reduction's tree.

import { ownTaskError, SpillwayError } from '../../../base/errors'
import type { AggregateSpec, CollectSpec, KeySpec, PartitionSpec, Reducer, SplitMarker, Step, StepFn } from '../../../wire/bag'
import type { FnDesc } from '../../../wire/functions'
import { KeyTable } from '../../../wire/key-equality'
import { checkJoinPairs, countPairs, OutputBound } from '../shuffle/collect-bound'
import { refuseAsync } from './async-steps'
import { accumulator, aggregate, keyOf, perPartition, type Fn, type Loaded } from './reducers'
import { eachItem, type Sink } from './items'
import { callInTask, callInTask2, runInStore, type TaskStore } from '../../context'
import { csvItems, parquetItems } from './tabular'
import { textPartition } from './text-blocks'
import { writeLines } from './text-writer'

export interface FunctionLoader {
  get(desc: FnDesc): Promise<Fn>
  /** Reads a shuffle output's shards (the worker's shuffle service); absent where there is none. */
  collect?(spec: CollectSpec, markers: SplitMarker[]): Promise<unknown[]>
  /** The worker's memory limit: what a file read whole may take is a share of it. */
  readonly memoryLimit?: number
  /**
   * The task these functions run for, where it runs without AsyncLocalStorage
   * (context.ts runSync): each call of a user's function gets its context back.
   */
  readonly task?: TaskStore
}

/**
 * A step's function with its extra arguments, whose every result is checked
 * to be no Promise: steps run synchronously, item by item, so a Promise
 * would be kept as an item (a filter keeps everything, a sum concatenates).
 * Made for the number of values it takes (an item; an accumulator and an
 * item for a binop): a rest-parameter wrapper made an array per call.
 */
export function syncStep(fn: Fn, args: unknown[], desc: FnDesc, role: string, arity: 1 | 2 = 1, task?: TaskStore): Fn {
  if (arity === 2) {
    const f = args.length ? (a: unknown, b: unknown) => fn(a, b, ...args) : fn
    return task ? (a, b) => refuseAsync(callInTask2(task, f, a, b), desc, role) : (a, b) => refuseAsync(f(a, b), desc, role)
  }
  const f = args.length ? (a: unknown) => fn(a, ...args) : fn
  return task ? (a) => refuseAsync(callInTask(task, f, a), desc, role) : (a) => refuseAsync(f(a), desc, role)
}

export async function loadStep(load: FunctionLoader, s: StepFn, role: string, arity: 1 | 2 = 1): Promise<Fn> {
  return syncStep(await load.get(s.fn), s.args, s.fn, role, arity, load.task)
}

export async function keyFunction(load: FunctionLoader, k: KeySpec, role = 'key'): Promise<(item: unknown) => unknown> {
  return keyOf(k, 'fn' in k ? await loadStep(load, k.fn, role) : undefined)
}

type JoinStep = Extract<Step, { op: 'join-broadcast' }>

/** The small side of a broadcast join by key (keys equal by value). */
function byRightKey(small: unknown[], rightKey: (v: unknown) => unknown): KeyTable<unknown[]> {
  const byKey = new KeyTable<unknown[]>('join key')
  for (const r of small) {
    const k = rightKey(r)
    ;(byKey.find(k) ?? byKey.add(k, [])).value.push(r)
  }
  return byKey
}

/** Each item with every item of the small side whose key is equal (and alone, as [item, undefined], for a left join), pushed to `next`. */
async function broadcastJoin(load: FunctionLoader, s: JoinStep, small: unknown[], next: Sink): Promise<Sink> {
  const leftKey = await keyFunction(load, s.leftKey, 'join leftKey')
  const rightKey = await keyFunction(load, s.rightKey, 'join rightKey')
  const byKey = byRightKey(small, rightKey)
  const left = s.how === 'left'
  return (l) => {
    const rs = byKey.get(leftKey(l))
    if (rs) for (const r of rs) next([l, r])
    else if (left) next([l, undefined])
  }
}

/** A per-item step fused in front of `next`. */
async function stepSink(load: FunctionLoader, step: Exclude<Step, { op: 'write' }>, fn: Fn | undefined, extra: unknown[], next: Sink): Promise<Sink> {
  switch (step.op) {
    case 'map':
      return (v) => next(fn!(v))
    case 'filter':
      return (v) => {
        if (fn!(v)) next(v)
      }
    case 'flatMap':
      return (v) => eachItem(iterableOf(fn!(v), 'flatMap'), next)
    case 'pluck': {
      const f = step.field
      return (v) => next((v as any)?.[f])
    }
    case 'join-broadcast':
      return broadcastJoin(load, step, extra[step.input] as unknown[], next)
    case 'mapPartitions':
      // runPartition pulls every step up to the last mapPartitions.
      throw ownTaskError('ERR_SPILLWAY_PROTOCOL', 'a mapPartitions step cannot take items one by one')
  }
}

/** Items pulled through the steps (a generator each) up to one that takes them all: mapPartitions, or a write. */
async function pullSteps(load: FunctionLoader, spec: PartitionSpec, items: Iterable<unknown>, upTo: number, fns: (Fn | undefined)[], extra: unknown[]): Promise<Iterable<unknown>> {
  for (let i = 0; i < upTo; i++) {
    const s = spec.steps[i]
    // A write consumes the items before it: the next steps see its path.
    if (s.op === 'write') items = [await writeLines(s.pattern.replace('*', String(spec.index)), items, s.compression)]
    else if (s.op === 'join-broadcast') {
      const small = extra[s.input] as unknown[]
      const pairs = pairsBound(load, spec, i)
      if (pairs) items = await countedLefts(load, s, small, items, pairs)
      items = await pulledJoin(items, (next) => broadcastJoin(load, s, small, next))
    }
    else items = applyStep(items, s, fns[i])
  }
  return items
}

/**
 * The left items of a broadcast join whose pairs the task will hold, once
 * those pairs are counted (as a shuffled join's are) and found to fit: a
 * hot key past the worker's share fails by name before any pair is made.
 */
async function countedLefts(load: FunctionLoader, s: JoinStep, small: unknown[], items: Iterable<unknown>, bound: OutputBound): Promise<unknown[]> {
  const lefts = Array.isArray(items) ? items : [...items]
  bound.add(lefts, 0)
  bound.add(small, 0)
  const leftKey = await keyFunction(load, s.leftKey, 'join leftKey')
  const rightKey = await keyFunction(load, s.rightKey, 'join rightKey')
  const byKey = byRightKey(small, rightKey)
  checkJoinPairs(bound, countPairs([{ side: 0, items: lefts }], (l) => byKey.get(leftKey(l)), [], rightKey, s.how))
  return lefts
}

/** A join's pairs pulled, an item's pairs at a time (its sink fills a buffer). */
async function pulledJoin(items: Iterable<unknown>, join: (next: Sink) => Promise<Sink>): Promise<Iterable<unknown>> {
  const pairs: unknown[] = []
  const sink = await join((pair) => void pairs.push(pair))
  return (function* () {
    for (const l of items) {
      sink(l)
      yield* pairs.splice(0)
    }
  })()
}

/** A custom reduction's function with its extra arguments, in its task's context across its awaits (it may be async). */
function bound(fn: Fn, args: unknown[], task: TaskStore | undefined): Fn {
  const f = args.length ? (...a: unknown[]) => fn(...a, ...args) : fn
  return task ? (...a: unknown[]) => runInStore(task, () => f(...a)) : f
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
    f.binop = await loadStep(load, r.binop, 'foldBy binop', 2)
    if (r.combine) f.combine = await loadStep(load, r.combine, 'foldBy combine', 2)
  }
  if (r.op === 'custom') {
    // Awaited as the task's own value: a Promise from either is its result, not an item.
    f.perPartition = bound(await load.get(r.perPartition.fn), r.perPartition.args, load.task)
    f.aggregate = bound(await load.get(r.aggregate.fn), r.aggregate.args, load.task)
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

/**
 * The number of steps up to and with the last one that takes the items as
 * a whole: mapPartitions, a write, or a broadcast join whose pairs the task
 * holds (counted before any is made).
 */
function wholeUpTo(load: FunctionLoader, spec: PartitionSpec): number {
  const steps = spec.steps
  for (let i = steps.length - 1; i >= 0; i--) if (steps[i].op === 'mapPartitions' || steps[i].op === 'write' || (steps[i].op === 'join-broadcast' && pairsBound(load, spec, i))) return i + 1
  return 0
}

/**
 * The bound of a broadcast join's pairs where the task holds them: not
 * where a reduction or a write after it consumes them one by one.
 */
function pairsBound(load: FunctionLoader, spec: PartitionSpec, step: number): OutputBound | undefined {
  const limit = load.memoryLimit
  if (limit === undefined || !Number.isFinite(limit) || spec.reduce || spec.steps.slice(step + 1).some((s) => s.op === 'write')) return undefined
  return new OutputBound({ shuffle: '', output: spec.index, npartitions: 0, what: 'a broadcast join', label: `partition ${spec.index}` }, limit)
}

/** A partition's items as an array, or its reduction's partial. */
export function runPartition(load: FunctionLoader, spec: PartitionSpec, ...inputs: unknown[]): Promise<unknown> {
  return partitionInto(load, spec, undefined, inputs)
}

/**
 * A partition's items pushed into `into` one by one as they are made (a
 * shuffle's split cuts and encodes them as they come, so they die young);
 * resolves to undefined then, or to its reduction's partial where it has one.
 */
export async function pushPartition(load: FunctionLoader, spec: PartitionSpec, into: Sink, ...inputs: unknown[]): Promise<unknown> {
  const value = await partitionInto(load, spec, spec.reduce ? undefined : into, inputs)
  return spec.reduce ? value : undefined
}

async function partitionInto(load: FunctionLoader, spec: PartitionSpec, into: Sink | undefined, inputs: unknown[]): Promise<unknown> {
  const fns = await Promise.all(spec.steps.map((s) => (s.op === 'pluck' || s.op === 'write' || s.op === 'join-broadcast' ? undefined : loadStep(load, s.call, s.op))))
  const reducer = spec.reduce ? await loadReducer(load, spec.reduce) : undefined
  const own = spec.broadcast ? inputs.slice(0, inputs.length - spec.broadcast) : inputs
  const extra = spec.broadcast ? inputs.slice(inputs.length - spec.broadcast) : []
  const source = await sourceItems(load, spec, own)
  // Pulled up to the last step that takes the items as a whole (all of them
  // for a custom reduction, whose function takes an iterable); pushed after.
  const acc = spec.reduce ? accumulator(spec.reduce, reducer!) : undefined
  const upTo = spec.reduce && !acc ? spec.steps.length : wholeUpTo(load, spec)
  const items = await pullSteps(load, spec, source, upTo, fns, extra)
  if (spec.reduce && !acc) return perPartition(spec.reduce, items, reducer!)
  if (!acc && !into && upTo === spec.steps.length && Array.isArray(items)) return items
  const out: unknown[] = []
  let sink: Sink = acc ? acc.push : (into ?? ((v) => void out.push(v)))
  for (let i = spec.steps.length - 1; i >= upTo; i--) sink = await stepSink(load, spec.steps[i] as Exclude<Step, { op: 'write' }>, fns[i], extra, sink)
  eachItem(items, sink)
  return acc ? acc.result() : out
}

/** One level of a reduction's tree: its inputs' partials combined. */
export async function runAggregate(load: FunctionLoader, spec: AggregateSpec, ...partials: unknown[]): Promise<unknown> {
  const f = await loadReducer(load, spec.reduce)
  return aggregate(spec.reduce, partials, spec.final, f)
}
