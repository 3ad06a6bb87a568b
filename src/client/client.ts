// The user's handle on a cluster: persist arrays, compute reductions, and
// read what the scheduler knows.

import { ChunkedArray, Reduction } from '../array/array'
import { Bag, BagItem, BagTake } from '../bag/bag'
import { Frame, FrameSlice, tableOf, type FrameTable } from '../frame/frame'
import { materializedOf } from '../frame/batches'
import { optimizeOption, type FrameComputeOptions } from './compute-options'
import { combinePartials, finishPartial } from '../native/chunks'
import type { LocalCluster } from '../deploy/local-cluster'
import type { Scheduler, TaskSubmission } from '../scheduler/scheduler'
import { shuffleIds, shufflesOf } from '../scheduler/shuffle'
import { checkShuffleRoom } from './shuffle-check'
import { checkChunkFit } from './chunk-check'
import { ClusterClosedError, ConfigError } from '../base/errors'
import { FutureEngine, type MapOptions, type SubmitOptions } from '../futures/engine'
import type { ScatterOptions } from '../futures/scatter-options'
import type { GatherOptions } from '../futures/gather-options'
import { mapArguments } from '../futures/map-calls'
import { futuresOf } from '../futures/wait'
import type { TaskFunction } from '../wire/functions'
import { checkKeys } from '../wire/keys'
import type { Future } from '../futures/future'
import type { FunctionOf, Gathered, MapIterables, Resolvable, ResultOf, ScatteredArray, ScatteredObject, SubmitRest } from '../futures/typing'
import { withProgress, type ProgressOption } from './progress'
import { hasWhat, keysOf, rebalanceValues, replicateValues, restart, retire, runOnWorkers, waitForWorkers, whoHas, type KeyLike, type WorkersOption } from './cluster-ops'
import type { RetireOptions, RetireReport } from '../scheduler/retire'
import type { RebalanceResult } from '../scheduler/rebalance'
import { lowestOn } from '../config/thresholds'
import { OPTIONS } from '../config/options'
import { checkArraySize, checkGraphSize } from './graph-limit'
import { iterateCollection, type IterateItem, type IterateOptions } from './iterate'
import { resolveLogger, type Logger } from '../base/logger'
import { releaseOnAbort, signalOf, unlessAborted } from '../base/abort'
import { cull } from './cull'

export interface ClientOptions {
  dashboardLink?: string
  /** Also closes the cluster when the client closes (setupClient's clients do). */
  ownsCluster?: boolean
  /** No progress bars, even when asked for (setupClient passes its silenceLogs). */
  silenceLogs?: boolean
  logger?: Logger // where its messages go (console's or pino's shape); default: stderr
  /** Tasks one persist or compute may make (setupClient's maxGraphTasks). */
  maxGraphTasks?: number
}

export class Client {
  dashboardLink: string | undefined
  #closed = false
  readonly #ownsCluster: boolean
  /** No progress bars for this client (setupClient's `silenceLogs`). */
  readonly silenceLogs: boolean
  readonly logger: Logger
  /** Tasks one persist or compute may make; a larger graph is ERR_SPILLWAY_GRAPH_TOO_LARGE before any task is made. */
  maxGraphTasks: number
  readonly #futures: FutureEngine

  constructor(
    readonly cluster: LocalCluster,
    options: ClientOptions = {},
  ) {
    this.dashboardLink = options.dashboardLink
    this.#ownsCluster = options.ownsCluster ?? false
    this.silenceLogs = options.silenceLogs ?? false
    this.logger = resolveLogger(options.logger, this.silenceLogs)
    this.maxGraphTasks = options.maxGraphTasks ?? OPTIONS.maxGraphTasks.default
    this.#futures = new FutureEngine(cluster.scheduler, cluster.secret, () => this.#check())
  }

  get scheduler(): Scheduler {
    return this.cluster.scheduler
  }

  #check(): void {
    if (this.#closed || this.cluster.closed) throw new ClusterClosedError(this.#closed ? 'client' : 'cluster')
  }

  /**
   * Places the array's chunk tasks on the workers and resolves once they are submitted, with the array bound to
   * this client; `await x.wait()` for the chunks. `{ progress: true }`: a bar of the chunks held (until all are).
   */
  async persist(array: ChunkedArray, options?: ProgressOption): Promise<ChunkedArray>
  async persist<T>(bag: Bag<T>, options?: ProgressOption): Promise<Bag<T>>
  async persist<S>(frame: Frame<S>, options?: ProgressOption): Promise<Frame<S>>
  async persist(array: ChunkedArray | Bag | Frame, options: ProgressOption = {}): Promise<ChunkedArray | Bag | Frame> {
    this.#check()
    const signal = signalOf(options, 'persist')
    if (array instanceof Frame) return this.#persistBag(optimizeOption(options)(array), options, signal)
    if (array instanceof Bag) return this.#persistBag(array, options, signal)
    if (!(array instanceof ChunkedArray)) {
      throw new ConfigError([{ field: 'array', value: typeof array, allowed: 'an array from random.random / random.randint, or a bag' }], 'persist argument')
    }
    checkArraySize(array, this.maxGraphTasks)
    const tasks = array.tasks()
    checkKeys(tasks.map((t, i) => ({ key: t.key, field: `array chunk ${i}'s key (from its function's name)` })), 'persist argument')
    this.#submitGraph(tasks)
    const bound = array.withOwner({
      waitFor: (keys) => this.scheduler.waitFor(keys),
      release: this.#releaser(array.keys(), tasks),
    })
    releaseOnAbort(signal, () => bound.release())
    if (options.progress && !this.silenceLogs) {
      // In the background: persist still resolves once the tasks are submitted.
      void withProgress(this, bound, () => bound.wait(), { label: 'persist' }).catch(() => {})
    }
    return bound
  }

  /**
   * Computes a reduction where the chunks live and combines the partials (an
   * array not persisted is freed chunk by chunk once reduced); a bag's items;
   * a frame's apache-arrow Table. `{ progress: true }` shows a bar of tasks.
   */
  async compute(expr: Reduction, options?: ProgressOption): Promise<number>
  async compute<T>(expr: BagItem<T>, options?: ProgressOption): Promise<T>
  async compute<T>(expr: Bag<T> | BagTake<T>, options?: ProgressOption): Promise<T[]>
  async compute<S>(expr: Frame<S> | FrameSlice<Frame<S>>, options?: FrameComputeOptions): Promise<FrameTable<S>>
  async compute(expr: Reduction | BagItem | Bag | BagTake | Frame | FrameSlice<Frame>, options: FrameComputeOptions = {}): Promise<unknown> {
    this.#check()
    const signal = signalOf(options, 'compute')
    const plan = optimizeOption(options)
    if (expr instanceof FrameSlice) return unlessAborted(signal, new FrameSlice(plan(expr.frame as Frame), expr.n, expr.fromEnd).run(this))
    if (expr instanceof BagTake) return this.#take(expr.bag, expr.n, signal)
    if (expr instanceof Frame) return this.#computeBag(plan(expr), options, signal)
    if (expr instanceof Bag || expr instanceof BagItem) return this.#computeBag(expr, options, signal)
    if (!(expr instanceof Reduction)) {
      throw new ConfigError([{ field: 'expr', value: typeof expr, allowed: 'a reduction such as x.mean() or x.sum(), a bag or a bag reduction' }], 'compute argument')
    }
    checkArraySize(expr.array, this.maxGraphTasks)
    if (options.progress && !this.silenceLogs) {
      return withProgress(this, expr.array, () => this.#compute(expr, signal), { label: `compute ${expr.op}` })
    }
    return this.#compute(expr, signal)
  }

  async #compute(expr: Reduction, signal?: AbortSignal): Promise<number> {
    const { array, op } = expr
    const keys = array.keys()
    const transient = !array.persisted
    // Held here until reduced (each chunk of an array never persisted is let go of then).
    const held = new Set(keys)
    const tasks = array.tasks()
    checkKeys(tasks.map((t, i) => ({ key: t.key, field: `array chunk ${i}'s key (from its function's name)` })), 'persist argument')
    this.#submitGraph(tasks)
    const lanes = Math.max(2, this.totalThreads() * 2)
    const letGo = (ks: string[]) => {
      const mine = ks.filter((k) => held.delete(k))
      if (mine.length) this.scheduler.release(mine, signal?.aborted)
    }
    try {
      const partials = await unlessAborted(signal, this.scheduler.reduce(keys, array.dtype, op, lanes, transient ? letGo : undefined))
      const value = finishPartial(combinePartials(partials), op)
      return op === 'sum' && array.dtype === 'int64' ? Math.round(value) : value
    } finally {
      letGo([...held])
      // A rechunk among the tasks that failed midway leaves shards no chunk will read.
      if (!this.scheduler.closed) shufflesOf(this.scheduler).dropUnread(tasks)
    }
  }

  #checkBagSize(bag: Bag<any> | BagItem<any> | Frame): void {
    const tasks = bag instanceof BagItem ? bag.tasks.count : bag.taskCount()
    const what = bag instanceof BagItem ? `reduction ${bag.name}` : `${bag instanceof Frame ? 'frame' : 'bag'} ${bag.name} of ${bag.npartitions} partitions`
    checkGraphSize({ tasks, what, advice: 'use fewer, larger partitions (npartitions, partitionSize, blocksize, repartition)' }, this.maxGraphTasks)
  }

  /** A bag's or an array's tasks, a shuffle's outputs (a rechunk's new chunks) placed on their owners first. */
  #submitGraph(subs: TaskSubmission[]): void {
    const fresh = subs.filter((s) => !this.scheduler.tasks.has(s.key))
    let memoryBytes = 0
    for (const w of this.scheduler.workers.values()) memoryBytes += w.memoryLimit * lowestOn(w.metrics?.thresholds ?? this.scheduler.thresholds)
    checkChunkFit(fresh, Math.min(...[...this.scheduler.workers.values()].map((w) => w.memoryLimit)))
    checkShuffleRoom(fresh, { spillDir: this.cluster.options.spillDir, memoryBytes, nbytesOf: (k) => this.scheduler.tasks.get(k)?.nbytes ?? 0 })
    this.scheduler.submit(shufflesOf(this.scheduler).prepare(subs))
  }

  /**
   * Lets go of `keys` as they are held now, when asked later: a key made
   * again since (after client.restart(), or after it failed) is another
   * generation, another holder's to let go of. The shards of the
   * collection's shuffles (a rechunk, a groupBy) go too, on every worker,
   * once no output of theirs runs: released midway, they would stay until
   * the cluster closed.
   */
  #releaser(keys: string[], tasks: TaskSubmission[]): (ks: string[]) => void {
    const held = new Map(keys.map((k) => [k, this.scheduler.tasks.get(k)]))
    const ids = shuffleIds(tasks)
    return (ks) => {
      if (this.scheduler.closed) return
      const current = ks.filter((k) => {
        let t = held.get(k)
        while (t?.successor) t = t.successor
        return t !== undefined && this.scheduler.tasks.get(k) === t
      })
      if (current.length) this.scheduler.release(current)
      // The shuffles these keys came from keep shards until no output is left to read them.
      if (ids.size) shufflesOf(this.scheduler).dropWhenUnread(ids)
    }
  }

  async #persistBag(bag: Bag<any> | Frame, options: ProgressOption, signal?: AbortSignal): Promise<Bag<any> | Frame> {
    this.#checkBagSize(bag)
    const keys = bag.keys()
    // A frame's partitions may be upstream tasks' outputs as they are (a groupBy's): held too.
    const own = new Set(keys)
    const tasks = bag.tasks(true).map((t) => (own.has(t.key) ? { ...t, hold: true } : t))
    this.#submitGraph(tasks)
    const owner = { release: this.#releaser(keys, tasks) }
    const bound = bag instanceof Frame ? materializedOf(bag, owner) : bag.materialized(owner)
    releaseOnAbort(signal, () => bound.release())
    if (options.progress && !this.silenceLogs) void withProgress(this, keys, () => this.scheduler.waitFor(keys), { label: 'persist' }).catch(() => {})
    return bound
  }

  async #computeBag(expr: Bag | BagItem | Frame, options: ProgressOption, signal?: AbortSignal): Promise<unknown> {
    this.#checkBagSize(expr)
    const keys = expr instanceof BagItem ? [expr.key] : expr.keys()
    const tasks = cull(expr.tasks(), keys)
    const held = new Set(keys)
    const subs = tasks.map((t) => (held.has(t.key) ? { ...t, hold: true } : t))
    this.#submitGraph(subs)
    const fetch = async () => {
      if (signal) await unlessAborted(signal, this.scheduler.waitFor(keys))
      const values = await unlessAborted(signal, Promise.all(keys.map((k) => this.#futures.fetch(k))))
      return expr instanceof Bag ? values.flatMap((v) => v as unknown[]) : expr instanceof Frame ? tableOf(values) : expr.finish(values[0])
    }
    try {
      return options.progress && !this.silenceLogs ? await withProgress(this, subs.map((t) => t.key), fetch, { label: 'compute' }) : await fetch()
    } finally {
      if (!this.scheduler.closed) {
        this.scheduler.release(keys, signal?.aborted)
        shufflesOf(this.scheduler).dropUnread(subs)
      }
    }
  }

  /** A bag's items or a frame's RecordBatches, in order as partitions finish, a few partitions held at a time (iterate.ts). */
  iterate<C extends Bag<any> | Frame>(collection: C, options?: IterateOptions): AsyncIterableIterator<IterateItem<C>> {
    const host = { scheduler: this.scheduler, check: () => this.#check(), checkSize: (c: Bag<any> | Frame) => this.#checkBagSize(c), submitGraph: (subs: TaskSubmission[]) => this.#submitGraph(subs), fetch: (k: string) => this.#futures.fetch(k) }
    return iterateCollection(host, collection, options) as AsyncIterableIterator<IterateItem<C>>
  }

  /** The first `n` items, computing only the partitions it needs, in order. */
  async #take<T>(bag: Bag<T>, n: number, signal?: AbortSignal): Promise<T[]> {
    const out: T[] = []
    this.#checkBagSize(bag)
    const keys = bag.keys()
    const tasks = bag.tasks(false)
    for (let i = 0; i < keys.length && out.length < n; i++) {
      const own = cull(tasks, [keys[i]]).map((t) => (t.key === keys[i] ? { ...t, hold: true } : t))
      this.#submitGraph(own)
      try {
        if (signal) await unlessAborted(signal, this.scheduler.waitFor([keys[i]]))
        out.push(...((await unlessAborted(signal, this.#futures.fetch(keys[i]))) as T[]).slice(0, n - out.length))
      } finally {
        if (!this.scheduler.closed) this.scheduler.release([keys[i]], signal?.aborted)
      }
    }
    return out
  }

  /**
   * Runs `fn(...args)` on a worker and returns its Future at once. `fn` is a
   * module export `{ module, name }` (typed by `taskModule`) or a
   * self-contained function; Futures anywhere in `args` are replaced by
   * their values on the worker. The Future's type is what `fn` returns,
   * awaited; `args` are checked against its parameters.
   */
  submit<F extends TaskFunction>(fn: F, ...rest: SubmitRest<F, SubmitOptions>): Future<ResultOf<F>> {
    const [args = [], options = {}] = rest
    return this.#futures.submit(fn, args, options)
  }

  /**
   * One task `fn(item)` per item; their Futures, in order. With several
   * iterables (Dask's map), one task `fn(a, b, …)` per position, zipped and
   * stopping at the shortest. `batchSize` hands them to the scheduler that
   * many at a time.
   */
  map<F extends TaskFunction>(fn: F, items: Iterable<Resolvable<Parameters<FunctionOf<F>>[0]>>, options?: MapOptions): Future<ResultOf<F>>[]
  map<F extends TaskFunction>(fn: F, ...iterables: MapIterables<F>): Future<ResultOf<F>>[]
  map<F extends TaskFunction>(fn: F, ...iterablesThenOptions: [...MapIterables<F>, MapOptions]): Future<ResultOf<F>>[]
  map(fn: TaskFunction, ...rest: unknown[]): Future[] {
    const { iterables, options } = mapArguments(rest)
    return this.#futures.map(fn, iterables, options as MapOptions)
  }

  /**
   * Puts data on the workers (Dask's scatter); each Future can be passed to
   * tasks and survives the loss of its worker. An array gives a Future per
   * element (`split: false`: one for the whole array); a plain object is
   * one value unless `split: true` gives a Future per property; anything
   * else (a Buffer, a TypedArray, a number…) is one value.
   */
  scatter<A extends readonly unknown[]>(values: A, options?: ScatterOptions & { split?: true }): Promise<ScatteredArray<A>>
  scatter<T extends object>(values: T, options: ScatterOptions & { split: true }): Promise<ScatteredObject<T>>
  scatter<T>(value: T, options?: ScatterOptions & { split?: false }): Promise<Future<T>>
  scatter(value: unknown, options: ScatterOptions = {}): Promise<unknown> {
    return this.#futures.scatter(value, options)
  }

  /**
   * `futures` (a Future, or Futures nested in arrays and objects) with each
   * Future replaced by its value, in the same shape. `errors: 'skip'`
   * leaves failed ones out (the element of an array, the property of an
   * object) instead of rejecting.
   */
  gather<const T>(futures: T, options?: GatherOptions): Promise<Gathered<T>> {
    return this.#futures.gather(futures, options) as Promise<Gathered<T>>
  }

  /** Runs the erred or cancelled tasks of `futures` again (Dask's Client.retry); see Future.retry. */
  retry(futures: Future | Iterable<Future>): void {
    for (const f of futuresOf(futures, 'retry arguments')) f.retry()
  }

  /**
   * Resolves once at least `n` workers are connected (Dask's
   * wait_for_workers): workers started elsewhere with `spillway worker`
   * join after setupClient returns. Rejects with ERR_SPILLWAY_TIMEOUT after
   * `timeout` ms (default: no limit).
   */
  async waitForWorkers(n: number, options: { timeout?: number } = {}): Promise<void> {
    this.#check()
    return waitForWorkers(this.scheduler, n, options)
  }

  /** Threads per worker, keyed by worker address. */
  nthreads(): Record<string, number> {
    const out: Record<string, number> = {}
    for (const [a, w] of this.scheduler.workers) out[a] = w.nthreads
    return out
  }

  totalThreads(): number {
    return Object.values(this.nthreads()).reduce((a, b) => a + b, 0)
  }

  /** Calls `fn(...args)` on every worker (or `options.workers`), outside the task graph: `{ address: result }` (Dask's Client.run). */
  async run<F extends TaskFunction>(fn: F, args: Parameters<FunctionOf<F>> | [] = [], options: WorkersOption = {}): Promise<Record<string, ResultOf<F>>> {
    this.#check()
    return (await runOnWorkers(this.scheduler, fn, args, options)) as Record<string, ResultOf<F>>
  }

  /** Kills every worker and starts it afresh; every Future is cancelled (Dask's Client.restart). Resolves once the workers are back. */
  async restart(options: { timeout?: number } = {}): Promise<void> {
    this.#check()
    await restart(this.cluster, options.timeout)
  }

  /** `{ key: [worker addresses] }`: where each Future's value is held (every key the cluster knows when none are given). */
  async whoHas(futures?: KeyLike | Iterable<KeyLike>): Promise<Record<string, string[]>> {
    this.#check()
    return whoHas(this.scheduler, futures === undefined ? undefined : keysOf(futures, 'futures'))
  }

  /** `{ worker address: [keys] }`: what each worker holds. */
  async hasWhat(): Promise<Record<string, string[]>> {
    this.#check()
    return hasWhat(this.scheduler)
  }

  /**
   * Retires workers gracefully (Dask's retire_workers): they take no new
   * work, their values move to the other workers, and then they stop
   * (`closeWorkers: false` keeps them, empty and idle). Rejects with
   * ERR_SPILLWAY_RETIRE_FAILED, keeping the workers, when the others cannot
   * take their values.
   */
  async retireWorkers(workers: string[], options: RetireOptions = {}): Promise<RetireReport[]> {
    this.#check()
    return retire(this.scheduler, workers, options)
  }

  /** Moves values from the workers holding the most to those holding the least, by Dask's rule (only `futures`' when given). */
  async rebalance(futures?: KeyLike | Iterable<KeyLike>): Promise<RebalanceResult> {
    this.#check()
    return rebalanceValues(this.scheduler, futures === undefined ? undefined : keysOf(futures, 'futures'))
  }

  /** Keeps `n` copies of each Future's value on distinct workers (every worker by default); a lost holder is then no recompute. */
  async replicate(futures: KeyLike | Iterable<KeyLike>, n?: number): Promise<void> {
    this.#check()
    await replicateValues(this.scheduler, keysOf(futures, 'futures'), n)
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    this.#futures.close()
    if (this.#ownsCluster) await this.cluster.close()
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }
}
