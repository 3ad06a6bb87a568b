// getClient(): inside a task on a worker, a client of the same cluster
// (Dask's get_client / worker_client). Its sub-tasks go to the scheduler
// through the worker's link; their values come from their holders' data
// servers, never through the scheduler. While the task waits on them
// (result, gather, wait, asCompleted) its slot is given back and taken
// again before it goes on (Dask's secede / rejoin), so recursion cannot
// deadlock even a worker of one thread. What the task holds is let go of
// when it returns: its Futures do not outlive it.

import { createHash, randomUUID } from 'node:crypto'
import { ArgumentError, ownTaskError, SpillwayError } from '../base/errors'
import { workerError } from '../comm/rpc'
import type { TaskFunction } from '../wire/functions'
import type { Inputs, KeyOutcome, SubTask } from '../wire/protocol'
import { decodeValue, encodeValue } from '../wire/values'
import { taskServices, type TaskServices } from '../worker/context'
import { Future, Share, type FutureOwner, type KeyRecord } from './future'
import { gatherPlan, mapTasks, submitTask, type MapOptions, type SubmitOptions, type Submitter } from './submission'
import { gatherErrors, type GatherOptions } from './gather-options'
import { mapArguments } from './map-calls'
import { scatterOptionProblems, scatterShaped, type ScatterOptions } from './scatter-options'
import type { FunctionOf, Gathered, MapIterables, Resolvable, ResultOf, ScatteredArray, ScatteredObject, SubmitRest } from './typing'

/** Tries to read a value whose holder lost it before its key is given up on (the scheduler makes it again meanwhile). */
const FETCH_ATTEMPTS = 20

/** What a task's client does not do (yet): the scheduler-side holds they need are a client's, not a run's. */
function notInTask(what: string): SpillwayError {
  return new SpillwayError('ERR_SPILLWAY_INVALID_ARGUMENT', `${what} is not available to a task's own client (getClient()): call it from the client that started the work`, { what })
}

/**
 * A cycle the scheduler refused (a sub-task that would wait on its own
 * submitter) is spillway's finding, not the task's own error: its code
 * stays ERR_SPILLWAY_CYCLE through every task that waits on it.
 */
function keepCycle(e: any): Error {
  return e?.code === 'ERR_SPILLWAY_CYCLE' ? ownTaskError(e.code, e.message, e.details) : e
}

/**
 * Sub-tasks one task may hold at once. Each costs its worker about 5 KB (a
 * Future, its view, its message; 100 000 took 495 MB of rss) and the
 * scheduler a task record, so a task that submits a million in a loop
 * would take its worker down with it; past this, submit and map throw
 * instead, with a quarter of the smallest worker (1 GiB) at most spent.
 */
export const MAX_HELD_SUBTASKS = 50_000

function tooManySubtasks(held: number, more: number): SpillwayError {
  const fmt = (n: number) => n.toLocaleString('en-US')
  return ownTaskError(
    'ERR_SPILLWAY_GRAPH_TOO_LARGE',
    `this task holds ${fmt(held)} sub-tasks and would submit ${fmt(more)} more, past the ${fmt(MAX_HELD_SUBTASKS)} one task may hold at once: submit in batches, waiting on each and letting its Futures go (gather, then release()), or make work this wide a bag or an array from the client`,
    { held, more, maxHeldSubtasks: MAX_HELD_SUBTASKS },
  )
}

/** How many items an iterable has when it says so without being read (an array, a Set, a Map, a typed array). */
function knownSize(it: unknown): number {
  if (Array.isArray(it) || ArrayBuffer.isView(it)) return (it as { length: number }).length
  if (it instanceof Set || it instanceof Map) return it.size
  return Infinity
}

function ended(): SpillwayError {
  return new SpillwayError('ERR_SPILLWAY_CLOSED', "getClient()'s client works only while its task runs: the task has returned")
}

/** What the task knows of a key: pending until the scheduler says where its value is or how it failed. */
class KeyView implements KeyRecord {
  state: 'waiting' | 'memory' | 'erred' = 'waiting'
  error: Error | undefined
  where: Inputs[string] | undefined
  #asking: Promise<void> | undefined

  constructor(
    readonly key: string,
    private readonly ask: (key: string) => Promise<KeyOutcome>,
  ) {}

  whenInMemory(): Promise<void> {
    if (this.state === 'memory') return Promise.resolve()
    if (this.state === 'erred') return Promise.reject(this.error)
    this.#asking ??= this.ask(this.key).then(
      (o) => {
        this.#asking = undefined
        this.learn(o)
      },
      (e) => {
        this.#asking = undefined
        throw e
      },
    )
    return this.#asking.then(() => this.whenInMemory())
  }

  learn(o: KeyOutcome): void {
    // A submit the scheduler refused said so first; a wait answered after it names no better error.
    if (this.state === 'erred') return
    if (o.state === 'memory') {
      this.state = 'memory'
      this.where = { address: o.address, format: o.format, nbytes: o.nbytes }
    } else this.fail(keepCycle(workerError(o.error)))
  }

  fail(e: Error): void {
    this.state = 'erred'
    this.error = e
  }

  /** Its holder no longer has it: ask again where it is (the scheduler is making it again). */
  forget(): void {
    if (this.state !== 'memory') return
    this.state = 'waiting'
    this.where = undefined
  }
}

export class TaskClient implements FutureOwner, Submitter {
  readonly id = randomUUID()
  readonly owner: FutureOwner = this
  readonly #shares = new Map<string, Share>()
  readonly #views = new Map<string, KeyView>()

  constructor(private readonly services: TaskServices) {}

  #check(): void {
    if (this.services.ended) throw ended()
  }

  holds = (key: string): boolean => !this.services.ended && this.#shares.has(key)

  record(_key: string, share: Share): KeyRecord | undefined {
    return this.services.ended ? undefined : share.record
  }

  isCurrent(key: string, share: Share): boolean {
    return !this.services.ended && share.record !== undefined && this.#views.get(key) === share.record
  }

  #ask = async (key: string): Promise<KeyOutcome> => {
    const [o] = await this.services.call<KeyOutcome[]>({ op: 'wait', run: this.services.run, keys: [key] })
    return o
  }

  share(key: string): Share {
    let v = this.#views.get(key)
    if (!v) this.#views.set(key, (v = new KeyView(key, this.#ask)))
    let s = this.#shares.get(key)
    if (!s || s.record !== v) this.#shares.set(key, (s = new Share(v)))
    s.holds++
    return s
  }

  release(key: string, share: Share): void {
    // The scheduler counts the run's holds on the key's current record alone: an earlier generation's were dropped when it was submitted again.
    const current = this.isCurrent(key, share)
    share.holds--
    if (share.holds <= 0 && this.#shares.get(key) === share) {
      this.#shares.delete(key)
      this.#views.delete(key)
    }
    // Once the task has returned, the scheduler let go of everything it held.
    if (!share.cancelled && current) this.services.tell({ op: 'release', run: this.services.run, keys: [key] })
  }

  cancel(keys: string[]): void {
    if (this.services.ended) return
    const mine = keys.filter((k) => this.#shares.has(k))
    if (!mine.length) return
    this.services.call<{ released: string[] }>({ op: 'cancel', run: this.services.run, keys: mine }).then(
      ({ released }) => {
        const only = new Set(released)
        for (const k of mine) {
          const share = this.#shares.get(k)
          if (!only.has(k)) this.#views.get(k)?.forget()
          else if (share) {
            // Others hold it too: only this task's Futures of it read cancelled (its holds are let go of there).
            this.#shares.delete(k)
            share.cancel(new SpillwayError('ERR_SPILLWAY_CANCELLED', `task ${JSON.stringify(k)} was cancelled`, { key: k }))
          }
        }
      },
      () => {},
    )
  }

  holdUntilDone(): void {
    throw notInTask('fireAndForget')
  }

  retry(): void {
    throw notInTask('retry')
  }

  unlessClosed<T>(p: Promise<T>): Promise<T> {
    if (this.services.ended) return Promise.reject(ended())
    return this.services.during(p)
  }

  /** Throws, before anything is sent, when `more` new keys would pass what one task may hold. */
  #checkRoom(more: number): void {
    if (this.#shares.size + more > MAX_HELD_SUBTASKS) throw tooManySubtasks(this.#shares.size, more)
  }

  /** Sends sub-tasks; a refusal fails their Futures with the scheduler's error. */
  #send(subs: SubTask[]): Future[] {
    this.#checkRoom(subs.filter((s) => !this.#shares.has(s.key)).length)
    // A failed key submitted again runs again, as the scheduler makes a fresh record of it.
    for (const s of subs) if (this.#views.get(s.key)?.state === 'erred') this.#views.set(s.key, new KeyView(s.key, this.#ask))
    const futures = subs.map((s) => new Future(s.key, this))
    const parent = this.services.key
    this.services.call({ op: 'submit', run: this.services.run, tasks: subs, ...(parent === undefined ? {} : { parent }) }).catch((e) => {
      for (const s of subs) this.#views.get(s.key)?.fail(keepCycle(e))
    })
    return futures
  }

  /** Runs `fn(...args)` on the cluster; as Client.submit. */
  submit<F extends TaskFunction>(fn: F, ...rest: SubmitRest<F, SubmitOptions>): Future<ResultOf<F>> {
    this.#check()
    const [args = [], options = {}] = rest
    return this.#send([submitTask(this, fn, args, options)])[0]
  }

  /** One task `fn(item)` per item, or `fn(a, b, …)` per position of several iterables; as Client.map. */
  map<F extends TaskFunction>(fn: F, items: Iterable<Resolvable<Parameters<FunctionOf<F>>[0]>>, options?: MapOptions): Future<ResultOf<F>>[]
  map<F extends TaskFunction>(fn: F, ...iterables: MapIterables<F>): Future<ResultOf<F>>[]
  map<F extends TaskFunction>(fn: F, ...iterablesThenOptions: [...MapIterables<F>, MapOptions]): Future<ResultOf<F>>[]
  map(fn: TaskFunction, ...rest: unknown[]): Future[] {
    this.#check()
    const { iterables, options = {} } = mapArguments(rest) as { iterables: unknown[]; options?: MapOptions }
    // Refused before a sub-task is made, where the items are counted without reading them.
    const known = Math.min(...iterables.map(knownSize))
    if (Number.isFinite(known)) this.#checkRoom(known)
    const subs = mapTasks(this, fn, iterables, options)
    const size = options.batchSize ?? Math.max(1, subs.length)
    const out: Future[] = []
    for (let i = 0; i < subs.length; i += size) out.push(...this.#send(subs.slice(i, i + size)))
    return out
  }

  /**
   * Futures of data, in the shapes Client.scatter takes (not broadcast).
   * From a task a value travels to the scheduler as the argument of a task
   * that returns it, so a lost copy is made again from there (as large as
   * one message to the scheduler may be).
   */
  scatter<A extends readonly unknown[]>(values: A, options?: ScatterOptions & { split?: true }): Promise<ScatteredArray<A>>
  scatter<T extends object>(values: T, options: ScatterOptions & { split: true }): Promise<ScatteredObject<T>>
  scatter<T>(value: T, options?: ScatterOptions & { split?: false }): Promise<Future<T>>
  async scatter(value: unknown, options: ScatterOptions = {}): Promise<unknown> {
    this.#check()
    const problems = scatterOptionProblems(options)
    if (problems.length) throw new ArgumentError(problems, 'scatter options')
    if (options.broadcast) throw notInTask('scatter with broadcast')
    return scatterShaped(value, options, async (part) => {
      const { bytes, format } = encodeValue(part)
      const key = options.hash === false ? `scatter-${randomUUID()}` : `scatter-${createHash('sha256').update(format).update(bytes).digest('hex').slice(0, 32)}`
      const f = this.submit((v: unknown) => v, [part], { key, workers: options.workers })
      await f.settled()
      return f
    })
  }

  /** `futures` with each Future replaced by its value, in the same shape; as Client.gather (errors: 'skip' too). */
  async gather<const T>(futures: T, options?: GatherOptions): Promise<Gathered<T>> {
    this.#check()
    const plan = await gatherPlan(this, futures, gatherErrors(options) === 'skip')
    return plan.fill(await this.unlessClosed(this.#fetchMany(plan.keys))) as Gathered<T>
  }

  async fetch(key: string): Promise<unknown> {
    return (await this.#fetchMany([key])).get(key)
  }

  /** Values of keys, read where the scheduler says they are; asked again for any whose holder lost them. */
  async #fetchMany(keys: string[]): Promise<Map<string, unknown>> {
    const out = new Map<string, unknown>()
    for (let attempt = 1; ; attempt++) {
      const views = keys.filter((k) => !out.has(k)).map((k) => this.#views.get(k) ?? new KeyView(k, this.#ask))
      await Promise.all(views.map((v) => v.whenInMemory()))
      const who: Inputs = Object.create(null)
      for (const v of views) who[v.key] = v.where!
      try {
        const got = await this.services.fetch(who)
        for (const v of views) out.set(v.key, decodeValue(got.get(v.key)!, v.where!.format))
        return out
      } catch (e: any) {
        const missing: string[] | undefined = e?.missing ?? e?.details?.keys
        if (e?.code !== 'ERR_SPILLWAY_MISSING_DEP' || !missing || attempt >= FETCH_ATTEMPTS) throw e
        for (const v of views) if (missing.includes(v.key)) v.forget()
        await new Promise((r) => setTimeout(r, Math.min(500, 25 * attempt)))
      }
    }
  }
}

/**
 * A client of the cluster this task runs on (Dask's get_client), for the
 * task's own sub-tasks; throws ERR_SPILLWAY_NO_TASK outside a task. Waiting
 * on what it submits gives the task's slot back meanwhile.
 */
export function getClient(): TaskClient {
  const s = taskServices('getClient()')
  return (s.client ??= new TaskClient(s)) as TaskClient
}
