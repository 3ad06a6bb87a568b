// A bag: a lazily defined collection of items in partitions, as Dask's
// dask.bag. Per-item steps (map, filter, flatMap, pluck, mapPartitions)
// pile up on the bag and are fused into one task per partition when it
// runs; reductions run per partition, then as a tree.

import { ArgumentError } from '../base/errors'
import type { TaskSubmission } from '../scheduler/scheduler'
import type { Collect, KeySpec, Partitioner, Reducer, Step, StepFn } from '../wire/bag'
import { functionLabel, type TaskFunction } from '../wire/functions'
import type { ResolvableArgs, TaskFn } from '../futures/typing'
import { hashOf, partitionTasks, partsKey, treeTasks, type PartDef } from './graph'
import { shuffled, type ShuffleSide } from './shuffle'
import { NO_UPSTREAM, treeTaskCount, upstreamOf, type Upstream } from './upstream'
import { csvStep, parquetStep, textfilesStep, type ToCsvOptions, type ToParquetOptions, type WriteCompression } from './writers'
import { concurrencyOf, keySpec, npartitionsOf, positiveInt, splitEveryOf, splitStepOptions, stepFn, type ReductionOptions, type ShuffleOptions, type StepOptions } from './options'

export type { ReductionOptions, ShuffleOptions, StepOptions } from './options'

/** A key taken from an item: a function of it (its return value is the key, `K`), or one of its fields. */
export type KeyOf<T, K = any> = TaskFn<(item: T) => K> | (unknown extends T ? string | number : T extends object ? keyof T & (string | number) : never)

/** What a step that makes items may return: an iterable of them, its promise, or an async iterable. */
export type ItemsOf<R> = Iterable<R> | Promise<Iterable<R>> | AsyncIterable<R>
/** What `sum` gives: a bigint for a bag of bigints, else a number (a bag of `any` too). */
export type SumOf<T> = 0 extends 1 & T ? number : [T] extends [bigint] ? bigint : number

/** What a bag's tasks need of the client that persisted it. */
export interface BagOwner {
  release(keys: string[]): void
}

/** Dask's Item: a single value a reduction computes. `client.compute(item)` gives it. */
export class BagItem<T = unknown> {
  constructor(
    readonly name: string,
    /** Its tasks, the upstream ones first; the last's value is the result. */
    readonly tasks: Upstream,
    readonly key: string,
    /** Turns the final value into the result (mean, var and std from moments). */
    readonly finish: (v: unknown) => T = (v) => v as T,
  ) {}
}

/** The first `n` items of a bag: `client.compute(bag.take(n))` computes only the partitions it needs. */
export class BagTake<T = unknown> {
  constructor(
    readonly bag: Bag<T>,
    readonly n: number,
  ) {}
}

export class Bag<T = unknown> {
  readonly name: string
  #owner: BagOwner | undefined

  constructor(
    /** The label keys start with: the reader's or the last step's name. */
    readonly label: string,
    readonly parts: readonly PartDef[],
    readonly steps: readonly Step[] = [],
    /** Tasks that make the parts' inputs (another bag's partitions, a reduction). */
    readonly upstream: Upstream = NO_UPSTREAM,
    owner?: BagOwner,
  ) {
    this.name = `${label}-${hashOf({ parts: partsKey(parts), steps })}`
    this.#owner = owner
  }

  get npartitions(): number {
    return this.parts.length
  }

  /** Partition keys, in order. */
  keys(): string[] {
    return this.parts.map((_, i) => `${this.name}-${i}`)
  }

  /** How many tasks `tasks()` makes, counted without making them. */
  taskCount(): number {
    return this.upstream.count + this.parts.length
  }

  /** Every task this bag's partitions need, upstream first. */
  tasks(hold = true): TaskSubmission[] {
    return [...this.upstream(), ...partitionTasks(this.name, [...this.parts], [...this.steps], hold)]
  }

  /** A bag whose partitions are this one's tasks' values (after persist, or to stop fusion). */
  materialized(owner?: BagOwner): Bag<T> {
    const keys = this.keys()
    const parts = keys.map((k) => ({ source: { kind: 'inputs' as const }, deps: [k] }))
    return new Bag<T>(this.label, parts, [], upstreamOf(() => this.tasks(false), this.taskCount()), owner)
  }

  /** Lets go of the partitions a persist holds. */
  release(): void {
    const o = this.#owner
    this.#owner = undefined
    o?.release(this.parts.flatMap((p) => p.deps))
  }

  #with<U>(step: Step, label: string): Bag<U> {
    return new Bag<U>(label, this.parts, [...this.steps, step], this.upstream)
  }

  #call(op: 'map' | 'filter' | 'flatMap' | 'mapPartitions', fn: TaskFunction, all: unknown[]): Bag<any> {
    const { args, concurrency } = splitStepOptions(all, op)
    const call = stepFn(fn, args, `${op}(fn)`, concurrency)
    return this.#with({ op, call }, functionLabel(call.fn))
  }

  /**
   * `fn(item, ...args)` for every item; Futures may be among the args. `fn`
   * may return a promise: it is awaited, `{ concurrency }` (a last argument)
   * at a time per partition, the items' order kept.
   */
  map<R>(fn: TaskFn<(item: T) => R>, options: StepOptions): Bag<Awaited<R>>
  map<R, A extends unknown[] = []>(fn: TaskFn<(item: T, ...args: A) => R>, ...args: ResolvableArgs<A>): Bag<Awaited<R>>
  map(fn: TaskFunction, ...args: unknown[]): Bag<any> {
    return this.#call('map', fn, args)
  }

  /** The items for which `fn` (or the promise it returns) is truthy. */
  filter(fn: TaskFn<(item: T) => unknown>, options: StepOptions): Bag<T>
  filter<A extends unknown[] = []>(fn: TaskFn<(item: T, ...args: A) => unknown>, ...args: ResolvableArgs<A>): Bag<T>
  filter(fn: TaskFunction, ...args: unknown[]): Bag<T> {
    return this.#call('filter', fn, args)
  }

  /** Each item's iterable of items (or its promise, or an async iterable), flattened. */
  flatMap<R>(fn: TaskFn<(item: T) => ItemsOf<R>>, options: StepOptions): Bag<R>
  flatMap<R, A extends unknown[] = []>(fn: TaskFn<(item: T, ...args: A) => ItemsOf<R>>, ...args: ResolvableArgs<A>): Bag<R>
  flatMap(fn: TaskFunction, ...args: unknown[]): Bag<any> {
    return this.#call('flatMap', fn, args)
  }

  /** `fn(items, ...args)` once per partition: `items` is an iterable, the result an iterable of items (or its promise, or an async iterable). */
  mapPartitions<R, A extends unknown[] = []>(fn: TaskFn<(items: Iterable<T>, ...args: A) => ItemsOf<R>>, ...args: ResolvableArgs<A>): Bag<R> {
    return this.#call('mapPartitions', fn, args)
  }

  /** The field `field` of every item. */
  pluck<K extends keyof T>(field: K & (string | number)): Bag<T[K]> {
    if (typeof field !== 'string' && typeof field !== 'number') throw new ArgumentError([{ field: 'field', value: field, allowed: 'a field name or an index' }], 'pluck')
    return this.#with({ op: 'pluck', field }, 'pluck')
  }

  /** The first `n` items (see BagTake). */
  take(n: number): BagTake<T> {
    if (!(Number.isSafeInteger(n) && n >= 0)) throw new ArgumentError([{ field: 'n', value: n, allowed: 'an integer ≥ 0' }], 'take')
    return new BagTake(this, n)
  }

  /**
   * Writes each partition's items as lines to `pattern`, its '*' replaced by
   * the partition's index (compressed as its name says — .gz, .zst, .lz4 — or by `compression`).
   * Lazy: `client.compute` of the result writes and gives the paths.
   */
  toTextfiles(pattern: string, options: { compression?: WriteCompression } = {}): Bag<string> {
    return this.#with(textfilesStep(pattern, options), 'to-textfiles')
  }

  /** Writes each partition's records (objects) as a Parquet file, as toTextfiles writes lines (see ToParquetOptions). */
  toParquet(pattern: string, options: ToParquetOptions = {}): Bag<string> {
    const step = parquetStep(pattern, options) as Extract<Step, { op: 'write' }>
    // One write, one schema: the items are made once and held until written;
    // their columns' types, unified across partitions, go to every file's writer.
    const items = this.materialized()
    const schema = items.#reduce('parquet-schema', { op: 'parquetSchema', ...(step.parquet!.columns ? { columns: step.parquet!.columns } : {}) }, undefined)
    const parts = items.parts.map((p) => ({ ...p, deps: [...p.deps, schema.key], broadcast: 1 }))
    return new Bag<string>('to-parquet', parts, [step], schema.tasks)
  }

  /** Writes each partition's records (objects) as a CSV file, as toTextfiles writes lines (see ToCsvOptions). */
  toCsv(pattern: string, options: ToCsvOptions = {}): Bag<string> {
    return this.#with(csvStep(pattern, options), 'to-csv')
  }

  /** This bag's partitions followed by `others'`. */
  concat(...others: Bag<T>[]): Bag<T> {
    const all = [this, ...others]
    for (const [i, b] of others.entries()) if (!(b instanceof Bag)) throw new ArgumentError([{ field: `others[${i}]`, value: typeof b, allowed: 'a Bag' }], 'concat')
    const mats = all.map((b) => b.materialized())
    const upstream = upstreamOf(() => mats.flatMap((m) => m.upstream()), mats.reduce((n, m) => n + m.upstream.count, 0))
    return new Bag<T>('concat', mats.flatMap((m) => m.parts), [], upstream)
  }

  /** `n` partitions, each the concatenation of neighbouring ones (fewer only: no partition is split). */
  repartition(n: number): Bag<T> {
    positiveInt(n, 'n', 'repartition')
    const m = this.materialized()
    const keys = m.parts.flatMap((p) => p.deps)
    const per = Math.ceil(keys.length / Math.min(n, Math.max(1, keys.length)))
    const parts: PartDef[] = []
    for (let i = 0; i < keys.length; i += per) parts.push({ source: { kind: 'inputs' }, deps: keys.slice(i, i + per) })
    return new Bag<T>('repartition', parts, [], m.upstream)
  }

  #reduce<U>(label: string, reduce: Reducer, options: ReductionOptions | undefined, finish?: (v: unknown) => U): BagItem<U> {
    const splitEvery = splitEveryOf(options, label)
    const name = `${label}-${hashOf(this.name, reduce, splitEvery)}`
    const make = () => {
      const parts = partitionTasks(`${name}-part`, [...this.parts], [...this.steps], false, reduce)
      return [...this.upstream(), ...parts, ...treeTasks(name, parts.map((t) => t.key), reduce, splitEvery).tasks]
    }
    const count = this.upstream.count + this.parts.length + treeTaskCount(this.parts.length, splitEvery)
    // treeTasks names its last task so, whatever the tree's depth.
    return new BagItem<U>(name, upstreamOf(make, count), `${name}-final`, finish)
  }

  #side(by: Partitioner, reduce?: Reducer): ShuffleSide {
    return { name: this.name, parts: this.parts, steps: this.steps, upstream: this.upstream, by, reduce }
  }

  #shuffled<U>(label: string, sides: ShuffleSide[], npartitions: number, then: Collect, boundaries?: BagItem): Bag<U> {
    const b = boundaries && { key: boundaries.key, tasks: upstreamOf(() => boundaries.tasks().map((t) => (t.key === boundaries.key ? { ...t, hold: false } : t)), boundaries.tasks.count) }
    const out = shuffled(label, sides, npartitions, then, b)
    return new Bag<U>(label, out.parts, [], out.upstream)
  }

  /**
   * `[key, items]` for every key, in `npartitions` hash partitions, by the
   * P2P shuffle: shards go worker to worker and wait in the workers' spill
   * buffers, so the data may be larger than the cluster's memory. A group
   * must fit in a worker (else ERR_SPILLWAY_GROUP_TOO_LARGE names it); to
   * reduce each group, foldBy never builds them.
   */
  groupBy<P extends keyof T & (string | number)>(key: P, options?: ShuffleOptions & { maxGroupBytes?: number }): Bag<[T[P], T[]]>
  groupBy<K>(key: KeyOf<T, K>, options?: ShuffleOptions & { maxGroupBytes?: number }): Bag<[Awaited<K>, T[]]>
  groupBy(key: KeyOf<T>, options?: ShuffleOptions & { maxGroupBytes?: number }): Bag<[any, T[]]> {
    const k = keySpec(key, 'key', concurrencyOf(options, 'groupBy'))
    const max = options?.maxGroupBytes
    if (max !== undefined && !(typeof max === 'number' && max > 0)) throw new ArgumentError([{ field: 'options.maxGroupBytes', value: max, allowed: "a positive number of bytes (default half a worker's limit)" }], 'groupBy')
    return this.#shuffled('group-by', [this.#side({ kind: 'hash', key: k })], npartitionsOf(options, this.npartitions, 'groupBy'), { kind: 'groups', key: k, maxGroupBytes: max })
  }

  /** The same items, regrouped so that items with the same key share a partition. */
  shuffle(key: KeyOf<T>, options?: ShuffleOptions): Bag<T> {
    return this.#shuffled('shuffle', [this.#side({ kind: 'hash', key: keySpec(key, 'key', concurrencyOf(options, 'shuffle')) })], npartitionsOf(options, this.npartitions, 'shuffle'), { kind: 'items' })
  }

  /**
   * `[left, right]` for every pair whose keys are equal; with `how: 'left'`
   * (or 'outer') a side without a match pairs with undefined. A small
   * `other` (one partition, or `broadcast: true`) is sent whole to every
   * partition of this bag instead of shuffling both.
   */
  join<U>(other: Bag<U>, leftKey: KeyOf<T>, rightKey: KeyOf<U>, options: ShuffleOptions & { how?: 'inner' | 'left' | 'outer'; broadcast?: boolean } = {}): Bag<[T | undefined, U | undefined]> {
    if (!(other instanceof Bag)) throw new ArgumentError([{ field: 'other', value: typeof other, allowed: 'a Bag' }], 'join')
    const how = options.how ?? 'inner'
    if (!['inner', 'left', 'outer'].includes(how)) throw new ArgumentError([{ field: 'options.how', value: how, allowed: "'inner', 'left' or 'outer'" }], 'join')
    const l = keySpec(leftKey, 'leftKey', concurrencyOf(options, 'join'))
    const r = keySpec(rightKey, 'rightKey', concurrencyOf(options, 'join'))
    const broadcast = options.broadcast ?? (other.npartitions === 1 && how !== 'outer')
    if (typeof broadcast !== 'boolean') throw new ArgumentError([{ field: 'options.broadcast', value: broadcast, allowed: 'true or false' }], 'join')
    if (broadcast && how === 'outer') throw new ArgumentError([{ field: 'options.broadcast', value: true, allowed: "false with how: 'outer' (each partition would pair the small side's unmatched items again)" }], 'join')
    if (broadcast) {
      // The small side as one partition, sent to every task of this bag: no shuffle at all.
      const small = other.repartition(1).materialized()
      const key = small.parts[0].deps[0]
      const parts = this.parts.map((p) => ({ ...p, deps: [...p.deps, key], broadcast: (p.broadcast ?? 0) + 1 }))
      const input = this.parts[0]?.broadcast ?? 0
      const upstream = upstreamOf(() => [...this.upstream(), ...small.upstream()], this.upstream.count + small.upstream.count)
      return new Bag('join', parts, [...this.steps, { op: 'join-broadcast', input, how: how as 'inner' | 'left', leftKey: l, rightKey: r }], upstream)
    }
    const sides = [this.#side({ kind: 'hash', key: l }), other.#side({ kind: 'hash', key: r })]
    return this.#shuffled('join', sides, npartitionsOf(options, Math.max(this.npartitions, other.npartitions), 'join'), { kind: 'join', how, leftKey: l, rightKey: r })
  }

  /**
   * The items sorted by `key` across `npartitions` range partitions whose
   * boundaries come from a sample of the keys, in one total order
   * (wire/order.ts): booleans, then numbers and bigints by value, strings,
   * Dates, arrays element by element, other objects; NaN, null and
   * undefined last whatever the direction, or first with `nullsLast: false`.
   */
  sortBy(key: KeyOf<T>, options: ShuffleOptions & { descending?: boolean; nullsLast?: boolean } = {}): Bag<T> {
    const k = keySpec(key, 'key', concurrencyOf(options, 'sortBy'))
    const n = npartitionsOf(options, this.npartitions, 'sortBy')
    const descending = options.descending ?? false
    if (typeof descending !== 'boolean') throw new ArgumentError([{ field: 'options.descending', value: descending, allowed: 'true or false' }], 'sortBy')
    const nullsLast = options.nullsLast ?? true
    if (typeof nullsLast !== 'boolean') throw new ArgumentError([{ field: 'options.nullsLast', value: nullsLast, allowed: 'true (default: NaN, null and undefined last) or false (first)' }], 'sortBy')
    const sample = this.#reduce('sort-sample', { op: 'sample', key: k, outputs: n, descending, nullsLast }, undefined)
    return this.#shuffled('sort-by', [this.#side({ kind: 'range', key: k, descending, nullsLast })], n, { kind: 'sorted', key: k, descending, nullsLast }, sample)
  }

  /** A reduction whose result is a bag of one partition (its items the final value), or of `splitOut` hash partitions. */
  #reduceToBag<U>(label: string, reduce: Reducer, options: ReductionOptions | undefined): Bag<U> {
    if (options?.splitOut !== undefined) {
      const n = positiveInt(options.splitOut, 'options.splitOut', label)
      return this.#shuffled(label, [this.#side({ kind: 'hash-pairs' }, reduce)], n, { kind: 'aggregate', reduce })
    }
    const item = this.#reduce<U[]>(label, reduce, options)
    const upstream = upstreamOf(() => item.tasks().map((t) => (t.key === item.key ? { ...t, hold: false } : t)), item.tasks.count)
    return new Bag<U>(label, [{ source: { kind: 'inputs' }, deps: [item.key] }], [], upstream)
  }

  count(options?: ReductionOptions): BagItem<number> {
    return this.#reduce('count', { op: 'count' }, options)
  }

  /** A number, or a bigint for bigint items (the two are never mixed: ERR_SPILLWAY_MIXED_NUMBERS). */
  sum(options?: ReductionOptions): BagItem<SumOf<T>> {
    return this.#reduce('sum', { op: 'sum' }, options)
  }

  min(options?: ReductionOptions): BagItem<T> {
    return this.#reduce('min', { op: 'min' }, options)
  }

  max(options?: ReductionOptions): BagItem<T> {
    return this.#reduce('max', { op: 'max' }, options)
  }

  mean(options?: ReductionOptions): BagItem<number> {
    return this.#reduce('mean', { op: 'moments' }, options, (v) => {
      const [n, mean] = v as number[]
      return n === 0 ? NaN : mean
    })
  }

  /** Variance with `ddof` degrees of freedom taken off (default 0, as Dask's). */
  var(options: ReductionOptions & { ddof?: number } = {}): BagItem<number> {
    const ddof = options.ddof ?? 0
    if (!(Number.isSafeInteger(ddof) && ddof >= 0)) throw new ArgumentError([{ field: 'options.ddof', value: ddof, allowed: 'an integer ≥ 0' }], 'var')
    return this.#reduce('var', { op: 'moments' }, { splitEvery: options.splitEvery }, (v) => {
      const [n, , m2] = v as number[]
      return n - ddof > 0 ? m2 / (n - ddof) : NaN
    })
  }

  std(options: ReductionOptions & { ddof?: number } = {}): BagItem<number> {
    const v = this.var(options)
    return new BagItem<number>(v.name.replace(/^var/, 'std'), v.tasks, v.key, (x) => Math.sqrt(v.finish(x)))
  }

  /**
   * `perPartition(items)` on each partition's items (an iterable), then
   * `aggregate(results)` on arrays of their results, as a tree.
   */
  reduction<P, U>(perPartition: TaskFn<(items: Iterable<T>) => P>, aggregate: TaskFn<(partials: P[]) => U>, options?: ReductionOptions): BagItem<U> {
    return this.#reduce('reduction', { op: 'custom', perPartition: stepFn(perPartition, [], 'perPartition'), aggregate: stepFn(aggregate, [], 'aggregate') }, options)
  }

  /** `[item, count]` for every distinct item. */
  frequencies(options?: ReductionOptions): Bag<[T, number]> {
    return this.#reduceToBag('frequencies', { op: 'frequencies' }, options)
  }

  distinct(options?: ReductionOptions): Bag<T> {
    return this.#reduceToBag('distinct', { op: 'distinct' }, options)
  }

  /** The `k` largest items (by `key`, a function or a field), largest first. */
  topk(k: number, key?: KeyOf<T>, options?: ReductionOptions & StepOptions): Bag<T> {
    positiveInt(k, 'k', 'topk')
    return this.#reduceToBag('topk', { op: 'topk', k, key: key === undefined ? undefined : keySpec(key, 'key', concurrencyOf(options, 'topk')) }, options)
  }

  /**
   * `[key, acc]` for every key: `binop(acc, item)` folds each partition's
   * items of a key (from `initial`, else the first item), `combine(a, b)`
   * (default `binop`) their accumulators. No group is ever built.
   */
  foldBy<A, K>(
    key: KeyOf<T, K>,
    binop: TaskFn<(acc: A, item: T) => A | Promise<A>>,
    ...rest: [initial?: A, options?: ReductionOptions & StepOptions & { combine?: TaskFn<(a: A, b: A) => A | Promise<A>>; combineInitial?: A }]
  ): Bag<[Awaited<K>, A]> {
    const [initial, options = {}] = rest
    const reduce: Reducer = {
      op: 'foldBy',
      key: keySpec(key, 'key', concurrencyOf(options, 'foldBy')),
      binop: stepFn(binop, [], 'binop'),
      initial,
      hasInitial: rest.length >= 1 && initial !== undefined,
      combine: options.combine === undefined ? undefined : stepFn(options.combine, [], 'options.combine'),
      combineInitial: options.combineInitial,
      hasCombineInitial: options.combineInitial !== undefined,
    }
    return this.#reduceToBag('foldBy', reduce, { splitEvery: options.splitEvery, splitOut: options.splitOut })
  }
}
