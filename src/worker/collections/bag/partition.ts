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
import { drainAll, isThenable, keysOf, stage, type Stage } from './async-stage'
import { accumulator, aggregate, keyOf, perPartition, type Fn, type Loaded } from './reducers'
import { eachItem, type Sink } from './items'
import { callInTask, callInTask2, runInStore, type TaskStore } from '../../context'
import { csvItems, parquetItems } from './tabular'
import { textPartition } from './text-blocks'
import { pushStreamed, StreamedText } from './text-stream'
import { writeStep } from './writers'

export interface FunctionLoader {
  get(desc: FnDesc): Promise<Fn>
  /** Reads a shuffle output's shards (the worker's shuffle service); absent where there is none. */
  collect?(spec: CollectSpec, markers: SplitMarker[]): Promise<unknown[]>
  /** The worker's memory limit: what a task keeps whole (a streamed file's items, a broadcast join's pairs) may take is a share of it. */
  readonly memoryLimit?: number
  /**
   * The task these functions run for, where it runs without AsyncLocalStorage
   * (context.ts runSync): each call of a user's function gets its context back.
   */
  readonly task?: TaskStore
}

/**
 * A step's function with its extra arguments, whose results may be promises
 * (async-stage.ts awaits them). Made for the number of values it takes (an
 * item; an accumulator and an item for a binop): a rest-parameter wrapper
 * made an array per call.
 */
export function userStep(fn: Fn, args: unknown[], arity: 1 | 2 = 1, task?: TaskStore): Fn {
  // A function declared async keeps its context across its awaits from its first call (AsyncLocalStorage); others get it
  // for their synchronous part, and across awaits from the call after the one that returned a promise (async-stage.ts).
  if (task && ASYNC.test(fn.constructor?.name ?? '')) return bound(fn, args, task)
  if (arity === 2) {
    const f = args.length ? (a: unknown, b: unknown) => fn(a, b, ...args) : fn
    return task ? (a, b) => callInTask2(task, f, a, b) : f
  }
  const f = args.length ? (a: unknown) => fn(a, ...args) : fn
  return task ? (a) => callInTask(task, f, a) : f
}

const ASYNC = /^Async(Generator)?Function$/

export async function loadStep(load: FunctionLoader, s: StepFn, arity: 1 | 2 = 1): Promise<Fn> {
  return userStep(await load.get(s.fn), s.args, arity, load.task)
}

/** How many calls of a key's function may be pending at once, per partition (`{ concurrency }`, default 1). */
export const keyConcurrency = (k: KeySpec): number => ('fn' in k ? (k.fn.concurrency ?? 1) : 1)

/** A key function whose results may be promises: its callers resolve them (keysOf, a key stage). */
export async function keyFunction(load: FunctionLoader, k: KeySpec): Promise<(item: unknown) => unknown> {
  return keyOf(k, 'fn' in k ? await loadStep(load, k.fn) : undefined)
}

/** A key function whose results must not be promises (a pulled join's left key), refused by name. */
async function syncKeyFunction(load: FunctionLoader, k: KeySpec, role: string): Promise<(item: unknown) => unknown> {
  if (!('fn' in k)) return keyOf(k, undefined)
  const f = await loadStep(load, k.fn)
  const desc = k.fn.fn
  return (v) => refuseAsync(f(v), desc, role)
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

/**
 * Each item with every item of the small side whose key is equal (and
 * alone, as [item, undefined], for a left join), pushed to `next`. Pushed,
 * the left key may be async (a stage in `stages`); pulled, only where the
 * left items are an array (`lefts`), whose keys are awaited first.
 */
async function broadcastJoin(load: FunctionLoader, s: JoinStep, small: unknown[], next: Sink, stages?: Stage[], lefts?: unknown[]): Promise<Sink> {
  const leftKey = stages ? await keyFunction(load, s.leftKey) : lefts ? await keysOf(lefts, await keyFunction(load, s.leftKey), keyConcurrency(s.leftKey), load.task) : await syncKeyFunction(load, s.leftKey, 'join leftKey')
  const rightKey = await keyFunction(load, s.rightKey)
  const byKey = byRightKey(small, await keysOf(small, rightKey, keyConcurrency(s.rightKey), load.task))
  const left = s.how === 'left'
  const emit = (l: unknown, k: unknown) => {
    const rs = byKey.get(k)
    if (rs) for (const r of rs) next([l, r])
    else if (left) next([l, undefined])
  }
  if (!stages) return (l) => emit(l, leftKey(l))
  const st = stage(leftKey, emit, keyConcurrency(s.leftKey), load.task)
  stages.push(st)
  return st.sink
}

/**
 * A per-item step fused in front of `next`: synchronous until its function
 * returns a thenable (async-stage.ts), each such step's stage kept in
 * `stages` to be drained in order.
 */
async function stepSink(load: FunctionLoader, step: Exclude<Step, { op: 'write' }>, fn: Fn | undefined, extra: unknown[], next: Sink, stages: Stage[]): Promise<Sink> {
  const add = (call: (v: unknown) => unknown, emit: (v: unknown, r: unknown) => void) => {
    const st = stage(call, emit, (step as { call: StepFn }).call.concurrency ?? 1, load.task)
    stages.push(st)
    return st
  }
  // map's and filter's synchronous sinks are written out: the stage's own
  // costs a call to `emit` per item, much of a cheap step.
  switch (step.op) {
    case 'map': {
      const f = fn!
      const st = add(f, (_, r) => next(r))
      return (v) => {
        if (st.queued) return st.sink(v)
        const r = f(v)
        if (isThenable(r)) return st.begin(v, r)
        next(r)
      }
    }
    case 'filter': {
      const f = fn!
      const st = add(f, (v, keep) => {
        if (keep) next(v)
      })
      return (v) => {
        if (st.queued) return st.sink(v)
        const keep = f(v)
        if (isThenable(keep)) return st.begin(v, keep)
        if (keep) next(v)
      }
    }
    case 'flatMap':
      // An async generator's items are gathered as its call's promise.
      return add((v) => itemsOrPromise(fn!(v)), (_, r) => eachItem(iterableOf(r, 'flatMap'), next)).sink
    case 'pluck': {
      const f = step.field
      return (v) => next((v as any)?.[f])
    }
    case 'join-broadcast':
      return broadcastJoin(load, step, extra[step.input] as unknown[], next, stages)
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
    if (s.op === 'write') items = [await writeStep(s, spec.index, items, extra)]
    else if (s.op === 'join-broadcast') {
      const small = extra[s.input] as unknown[]
      const pairs = pairsBound(load, spec, i)
      if (pairs) items = await countedLefts(load, s, small, items, pairs)
      const lefts = Array.isArray(items) ? items : undefined
      items = await pulledJoin(items, (next) => broadcastJoin(load, s, small, next, undefined, lefts))
    }
    else if (s.op === 'mapPartitions') items = iterableOf(await itemsOrPromise(fns[i]!(items)), 'mapPartitions')
    else if (s.op === 'pluck') items = applyStep(items, s, undefined)
    else items = await pulledStep(load, items, s, fns[i]!, extra)
  }
  return items
}

/**
 * A per-item step's items pulled lazily one by one, as the step that takes
 * them whole asks; its first item's result decides: a thenable makes the
 * step async, its items awaited (in order, `concurrency` at a time) into an
 * array first. A later thenable is refused by name: a generator cannot wait.
 */
async function pulledStep(load: FunctionLoader, items: Iterable<unknown>, s: Extract<Step, { call: StepFn }>, fn: Fn, extra: unknown[]): Promise<Iterable<unknown>> {
  const it = items[Symbol.iterator]()
  const first = it.next()
  if (first.done) return []
  const raw = fn(first.value)
  // An async generator is read once: as the promise of its items.
  const r0 = s.op === 'flatMap' ? itemsOrPromise(raw) : raw
  const rest: Iterable<unknown> = { [Symbol.iterator]: () => it }
  if (!isThenable(r0)) {
    const checked = (v: unknown) => refuseAsync(fn(v), s.call.fn, s.op, 'pulled')
    return (function* () {
      if (s.op === 'map') yield r0
      else if (s.op === 'filter') {
        if (r0) yield first.value
      } else yield* iterableOf(r0, 'flatMap')
      yield* applyStep(rest, s, checked)
    })()
  }
  // The first item's call is made: its promise stands for it.
  let made = false
  const once = (v: unknown) => {
    if (made) return fn(v)
    made = true
    return r0
  }
  const out: unknown[] = []
  const stages: Stage[] = []
  const sink = await stepSink(load, s as Exclude<Step, { op: 'write' }>, once, extra, (v) => void out.push(v), stages)
  sink(first.value)
  eachItem(rest, sink)
  await drainAll(stages)
  return out
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
  const leftKey = await keysOf(lefts, await keyFunction(load, s.leftKey), keyConcurrency(s.leftKey), load.task)
  const rightKey = await keysOf(small, await keyFunction(load, s.rightKey), keyConcurrency(s.rightKey), load.task)
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
      // pullSteps calls it (it may be async).
      throw ownTaskError('ERR_SPILLWAY_PROTOCOL', 'a mapPartitions step is called by pullSteps')
  }
}

/** An async iterable's items as the promise of an array; anything else as it is. */
function itemsOrPromise(out: unknown): unknown {
  if (out == null || typeof (out as any)[Symbol.asyncIterator] !== 'function' || typeof (out as any)[Symbol.iterator] === 'function') return out
  return (async () => {
    const all: unknown[] = []
    for await (const v of out as AsyncIterable<unknown>) all.push(v)
    return all
  })()
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
    f.key = await keyFunction(load, r.key!)
  }
  if (r.op === 'foldBy') {
    f.binop = await loadStep(load, r.binop, 2)
    if (r.combine) f.combine = await loadStep(load, r.combine, 2)
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
  // A text block is read whole (at most `blocksize`), a compressed file streamed; lines are made as the steps consume them.
  return textPartition(src)
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
  const fns = await Promise.all(spec.steps.map((s) => (s.op === 'pluck' || s.op === 'write' || s.op === 'join-broadcast' ? undefined : loadStep(load, s.call))))
  const reducer = spec.reduce ? await loadReducer(load, spec.reduce) : undefined
  const own = spec.broadcast ? inputs.slice(0, inputs.length - spec.broadcast) : inputs
  const extra = spec.broadcast ? inputs.slice(inputs.length - spec.broadcast) : []
  const source = await sourceItems(load, spec, own)
  // Pulled up to the last step that takes the items as a whole (all of them
  // for a custom reduction, whose function takes an iterable); pushed after.
  const stages: Stage[] = []
  const acc = spec.reduce ? accumulator(spec.reduce, reducer!) : undefined
  const upTo = spec.reduce && !acc ? spec.steps.length : wholeUpTo(load, spec)
  const items = await pullSteps(load, spec, source, upTo, fns, extra)
  if (spec.reduce && !acc) return perPartition(spec.reduce, items, reducer!)
  if (!acc && !into && upTo === spec.steps.length && Array.isArray(items)) return items
  const out: unknown[] = []
  let sink: Sink = acc ? acc.push : (into ?? ((v) => void out.push(v)))
  for (let i = spec.steps.length - 1; i >= upTo; i--) sink = await stepSink(load, spec.steps[i] as Exclude<Step, { op: 'write' }>, fns[i], extra, sink, stages)
  // Made from the last step back: drained from the first.
  if (items instanceof StreamedText) await pushStreamed(items, sink, stages.reverse(), acc || into ? undefined : out, load.memoryLimit)
  else {
    eachItem(items, sink)
    if (stages.length) await drainAll(stages.reverse())
  }
  return acc ? acc.result() : out
}


/** One level of a reduction's tree: its inputs' partials combined. */
export async function runAggregate(load: FunctionLoader, spec: AggregateSpec, ...partials: unknown[]): Promise<unknown> {
  const f = await loadReducer(load, spec.reduce)
  return aggregate(spec.reduce, partials, spec.final, f)
}
