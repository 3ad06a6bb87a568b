// The client's side of futures: turns submit / map / scatter / gather into
// scheduler tasks and back. Values come back from the workers' data servers
// over the same authenticated sockets workers use among themselves.

import { createHash, randomUUID } from 'node:crypto'
import { serialize } from 'node:v8'
import { DataClient } from '../comm/data-client'
import type { DepRef, TaskFn } from '../wire/protocol'
import type { Scheduler, TaskSubmission } from '../scheduler/scheduler'
import type { TaskRecord } from '../scheduler/state'
import { ArgumentError, ClusterClosedError, SpillwayError, type ConfigProblem } from '../base/errors'
import { describeFunction, functionLabel, type FnDesc, type TaskFunction } from '../wire/functions'
import { Future, Share, type FutureOwner } from './future'
import { checkKeys } from '../wire/keys'
import { scatterTooLarge } from './scatter-limit'
import { dropAt, extract, place } from '../wire/nesting'
import { decodeValue, encodeValue } from '../wire/values'
import { unsendable } from '../wire/cloneable'
import { holdUntilDone } from './fire-and-forget'
import { retryErred } from './retry'
import { replicate } from '../scheduler/rebalance'
import { callsOf } from './map-calls'
import { gatherErrors, type GatherOptions } from './gather-options'
import { scatterOptionProblems, scatterShaped, type ScatterOptions } from './scatter-options'

export interface SubmitOptions {
  /** The task's key; by default made from the function's name and a hash (pure) or a random id. */
  key?: string
  /** Key the call by a hash of function and arguments, so the same call runs once. Default: true for module functions. */
  pure?: boolean
  /** Reruns after a thrown error. Default 0. */
  retries?: number
  /** Higher runs first among tasks ready at once. Default 0. */
  priority?: number
  /** Worker addresses or names the task may run on. */
  workers?: string[]
}

export interface MapOptions extends Omit<SubmitOptions, 'key'> {
  /** One key per call. */
  key?: string[]
  /** Hands the tasks to the scheduler this many at a time (Dask's batch_size); the keys and results are the same. Default: all at once. */
  batchSize?: number
}

const SUBMIT_OPTIONS = new Set(['key', 'pure', 'retries', 'priority', 'workers'])
const MAP_OPTIONS = new Set([...SUBMIT_OPTIONS, 'batchSize'])

function optionProblems(o: unknown, what: 'submit' | 'map', n = 0): ConfigProblem[] {
  if (o === undefined) return []
  const known = what === 'map' ? MAP_OPTIONS : SUBMIT_OPTIONS
  if (o === null || typeof o !== 'object' || Array.isArray(o)) return [{ field: 'options', value: o, allowed: `an object { ${[...known].join(', ')} }` }]
  const p: ConfigProblem[] = []
  const opts = o as Record<string, unknown>
  for (const k of Object.keys(opts)) if (!known.has(k)) p.push({ field: `options.${k}`, value: opts[k], allowed: `one of ${[...known].join(', ')}` })
  if (what === 'submit' && opts.key !== undefined && (typeof opts.key !== 'string' || opts.key.length === 0)) p.push({ field: 'options.key', value: opts.key, allowed: 'a non-empty string' })
  if (what === 'map' && opts.key !== undefined && (!Array.isArray(opts.key) || opts.key.length !== n || !opts.key.every((k) => typeof k === 'string' && k.length > 0))) {
    p.push({ field: 'options.key', value: opts.key, allowed: `an array of ${n} non-empty strings, one per call` })
  }
  if (opts.batchSize !== undefined && !(Number.isSafeInteger(opts.batchSize) && (opts.batchSize as number) >= 1)) p.push({ field: 'options.batchSize', value: opts.batchSize, allowed: 'a whole number ≥ 1' })
  if (opts.pure !== undefined && typeof opts.pure !== 'boolean') p.push({ field: 'options.pure', value: opts.pure, allowed: 'true or false' })
  if (opts.retries !== undefined && !(Number.isSafeInteger(opts.retries) && (opts.retries as number) >= 0)) p.push({ field: 'options.retries', value: opts.retries, allowed: 'a whole number ≥ 0' })
  if (opts.priority !== undefined && !(typeof opts.priority === 'number' && Number.isFinite(opts.priority))) p.push({ field: 'options.priority', value: opts.priority, allowed: 'a finite number' })
  if (opts.workers !== undefined && !(Array.isArray(opts.workers) && opts.workers.every((w) => typeof w === 'string'))) p.push({ field: 'options.workers', value: opts.workers, allowed: 'an array of worker addresses or names' })
  return p
}

function cancelledError(key: string): SpillwayError {
  return new SpillwayError('ERR_SPILLWAY_CANCELLED', `task ${JSON.stringify(key)} was cancelled`, { key })
}

export class FutureEngine implements FutureOwner {
  readonly id = randomUUID()
  readonly #data: DataClient
  readonly #shares = new Map<string, Share>()
  #closeWaits!: (e: Error) => void
  /** Rejects when the client closes: every wait of its Futures races it. */
  readonly #closed = new Promise<never>((_, reject) => (this.#closeWaits = reject))

  constructor(
    private readonly scheduler: Scheduler,
    secret: string,
    private readonly check: () => void,
  ) {
    this.#data = new DataClient(Buffer.from(secret, 'hex'))
    this.#closed.catch(() => {})
  }

  unlessClosed<T>(p: Promise<T>): Promise<T> {
    return Promise.race([p, this.#closed])
  }

  record(key: string): TaskRecord | undefined {
    return this.scheduler.tasks.get(key)
  }

  share(key: string): Share {
    let s = this.#shares.get(key)
    if (!s) this.#shares.set(key, (s = new Share()))
    s.holds++
    return s
  }

  release(key: string, share: Share): void {
    share.holds--
    if (share.holds <= 0 && this.#shares.get(key) === share) this.#shares.delete(key)
    // A cancelled share let go of all its holds when it was cancelled.
    if (!share.cancelled && !this.scheduler.closed) this.scheduler.release([key])
  }

  /**
   * Cancels keys for this client. A key other clients also hold is only let
   * go of here (this client's Futures of it read cancelled); one that no
   * other client holds is cancelled on the cluster.
   */
  cancel(keys: string[]): void {
    if (this.scheduler.closed) return
    const everywhere: string[] = []
    for (const key of keys) {
      const share = this.#shares.get(key)
      const t = this.scheduler.tasks.get(key)
      if (!share || !t || t.refs <= share.holds || t.state === 'erred') {
        everywhere.push(key)
        continue
      }
      this.#shares.delete(key)
      share.cancel(cancelledError(key))
      this.scheduler.release(new Array<string>(share.holds).fill(key))
    }
    if (everywhere.length) this.scheduler.cancel(everywhere)
  }

  /** Holds `keys` until `work` settles, so a value cannot be freed while it is on its way. */
  async #holding<T>(keys: string[], work: () => Promise<T>): Promise<T> {
    const held = keys.map((k) => this.scheduler.record(k))
    for (const t of held) t.refs++
    try {
      return await work()
    } finally {
      const still = held.filter((t) => this.scheduler.tasks.get(t.key) === t).map((t) => t.key)
      if (still.length && !this.scheduler.closed) this.scheduler.release(still)
    }
  }

  #isOurs = (v: unknown): v is Future => v instanceof Future

  /** Futures in `args`, checked to be this client's and still held. */
  #inputs(value: unknown, field: string, cancelledOk = false) {
    const found = extract(value, this.#isOurs)
    for (const { item, path } of found.slots) {
      const at = `${field}${path.map((p) => `[${JSON.stringify(p)}]`).join('')}`
      // As Dask: work on a Future this client cancelled fails with the cancel itself.
      if (item.owner === this && item.cancelledError) {
        if (cancelledOk) continue
        throw item.cancelledError
      }
      if (item.owner !== this) throw new ArgumentError([{ field: at, value: item.key, allowed: 'a Future of this client (Futures do not move between clients)' }], 'task arguments')
      if (item.released || !this.scheduler.tasks.has(item.key)) throw new ArgumentError([{ field: at, value: item.key, allowed: 'a Future that is still held (this one was released)' }], 'task arguments')
    }
    return found
  }

  /** `field` names `args` in errors; `item`: it names `args[0]` (map's items). */
  #submission(desc: FnDesc, args: unknown[], opts: Omit<SubmitOptions, 'key'>, key: string | undefined, pure: boolean, field: string, item = false): TaskSubmission {
    const { value, slots } = this.#inputs(args, field)
    const deps: DepRef[] = slots.map(({ item, path }) => ({ key: item.key, path }))
    const label = functionLabel(desc)
    // Caught here, a task that cannot be sent fails at submit, naming the part that cannot go.
    const refuse = (bad = unsendable(item ? (value as unknown[])[0] : value, field)) => {
      if (!bad) return
      throw new ArgumentError([{ field: bad.path, value: bad.what, allowed: 'values structured clone accepts: no functions, symbols or host objects (pass a module function by reference, or compute the value inside the task)' }], 'task arguments')
    }
    if (key !== undefined || !pure) refuse()
    if (key === undefined) {
      if (pure) {
        let bytes: Buffer
        try {
          bytes = serialize([value, deps.map((d) => d.key)])
        } catch (e: any) {
          refuse()
          throw e
        }
        key = `${label}-${createHash('sha256').update(desc.id).update(bytes).digest('hex').slice(0, 32)}`
      } else key = `${label}-${randomUUID()}`
    }
    const task: TaskFn = { fn: 'call', func: desc, args: value, deps }
    return {
      key,
      task,
      expectedBytes: 1,
      deps: [...new Set(deps.map((d) => d.key))],
      group: label,
      priority: opts.priority,
      retries: opts.retries,
      workers: opts.workers,
    }
  }

  submit(fn: TaskFunction, args: unknown = [], options: SubmitOptions = {}): Future {
    this.check()
    const desc = describeFunction(fn)
    if (!Array.isArray(args)) throw new ArgumentError([{ field: 'args', value: args, allowed: 'an array of arguments (Futures may be nested anywhere in it)' }], 'submit arguments')
    const problems = optionProblems(options, 'submit')
    if (problems.length) throw new ArgumentError(problems, 'submit options')
    const pure = options.pure ?? desc.kind === 'module'
    const sub = this.#submission(desc, args, options, options.key, pure, 'args')
    checkKeys([{ key: sub.key, field: options.key === undefined ? 'key (made from the function name)' : 'options.key' }], 'submit options')
    const [t] = this.scheduler.submit([sub])
    return new Future(t.key, this)
  }

  /** One task per call of `iterables` (one iterable: `fn(item)`; several: zipped, `fn(a, b, …)`). */
  map(fn: TaskFunction, iterables: unknown[], options: MapOptions = {}): Future[] {
    this.check()
    const desc = describeFunction(fn)
    const calls = callsOf(iterables)
    const problems = optionProblems(options, 'map', calls.length)
    if (problems.length) throw new ArgumentError(problems, 'map options')
    const pure = options.pure ?? desc.kind === 'module'
    const one = iterables.length === 1
    // One iterable names the item (`items[i]`), as map always has; several name the call (`calls[i][j]`: its argument j).
    const subs = calls.map((args, i) => this.#submission(desc, args, options, options.key?.[i], pure, one ? `items[${i}]` : `calls[${i}]`, one))
    checkKeys(subs.map((sub, i) => ({ key: sub.key, field: options.key ? `options.key[${i}]` : `key of ${one ? 'items' : 'calls'}[${i}] (made from the function name)` })), 'map options')
    const size = options.batchSize ?? Math.max(1, subs.length)
    const out: Future[] = []
    for (let i = 0; i < subs.length; i += size) for (const t of this.scheduler.submit(subs.slice(i, i + size))) out.push(new Future(t.key, this))
    return out
  }

  /** Dask's scatter: see scatter-options.ts for the shapes; each part's Future is finished when this resolves. */
  async scatter(value: unknown, options: ScatterOptions = {}): Promise<unknown> {
    this.check()
    const problems = scatterOptionProblems(options)
    if (problems.length) throw new ArgumentError(problems, 'scatter options')
    return scatterShaped(value, options, async (part, field) => {
      const f = await this.#scatterOne(part, field, options)
      // Dask's broadcast: as many copies as there are workers (replicate counts the holder's own).
      if (options.broadcast) await replicate(this.scheduler, [this.scheduler.record(f.key)], this.scheduler.workers.size)
      return f
    })
  }

  async #scatterOne(value: unknown, field: string, options: ScatterOptions): Promise<Future> {
    if (value instanceof Future) throw new ArgumentError([{ field, value: value.key, allowed: 'data, not a Future (it is already on the cluster)' }], 'scatter arguments')
    const { bytes, format } = encodeValue(value)
    const tooLarge = scatterTooLarge(bytes.length, this.scheduler.workers.values(), options.workers)
    if (tooLarge) throw tooLarge
    const key = options.hash === false ? `scatter-${randomUUID()}` : `scatter-${createHash('sha256').update(format).update(bytes).digest('hex').slice(0, 32)}`
    // The backup copies the bytes, so the caller may reuse its buffer once this resolves.
    const t = await this.scheduler.scatter(key, bytes, format, options)
    const f = new Future(t.key, this)
    // As Dask's: the Future a scatter resolves to is finished, its value held by a worker.
    await t.whenInMemory()
    return f
  }

  /** The value of a key held in memory, from its worker. */
  fetch(key: string): Promise<unknown> {
    return this.#holding([key], () => this.#fetch(key))
  }

  async #fetch(key: string): Promise<unknown> {
    for (let attempt = 0; ; attempt++) {
      const t = this.scheduler.record(key)
      await t.whenInMemory()
      const w = t.worker
      if (w?.alive) {
        try {
          const got = await this.#data.fetch(w.dataAddress, [key])
          const bytes = got.get(key)
          if (bytes) return decodeValue(bytes, t.format)
        } catch (e) {
          if (attempt >= 5) throw e
        }
        // The holder lost it or died: the scheduler makes it again.
        if (t.state === 'memory' && t.worker === w && w.alive) this.scheduler.recompute(t, w)
      }
      if (attempt >= 10) throw new SpillwayError('ERR_SPILLWAY_CHUNK_LOST', `value ${JSON.stringify(key)} could not be fetched`, { key })
      await new Promise((r) => setTimeout(r, 10))
    }
  }

  /** Values of many keys: one request per holding worker, one by one for any that moved meanwhile. */
  async #fetchMany(keys: string[]): Promise<Map<string, unknown>> {
    const records = keys.map((k) => this.scheduler.record(k))
    await Promise.all(records.map((t) => t.whenInMemory()))
    const out = new Map<string, unknown>()
    const byWorker = new Map<string, TaskRecord[]>()
    for (const t of records) {
      const a = t.worker?.alive ? t.worker.dataAddress : ''
      const list = byWorker.get(a) ?? byWorker.set(a, []).get(a)!
      list.push(t)
    }
    await Promise.all(
      [...byWorker].map(async ([address, ts]) => {
        if (address) {
          const got = await this.#data.fetch(address, ts.map((t) => t.key)).catch(() => undefined)
          for (const t of ts) {
            const bytes = got?.get(t.key)
            if (bytes) out.set(t.key, decodeValue(bytes, t.format))
          }
        }
        for (const t of ts) if (!out.has(t.key)) out.set(t.key, await this.#fetch(t.key))
      }),
    )
    return out
  }

  /** `nested` with each Future replaced by its value, fetched in parallel; with errors 'skip', failed ones left out. */
  async gather(nested: unknown, options?: GatherOptions): Promise<unknown> {
    this.check()
    const skip = gatherErrors(options) === 'skip'
    const { value, slots } = this.#inputs(nested, 'futures', skip)
    if (skip) await this.unlessClosed(Promise.all(slots.map((s) => s.item.settled())))
    const failed = (f: Future) => skip && (f.status === 'error' || f.status === 'cancelled')
    const kept = slots.filter((s) => !failed(s.item))
    const keys = [...new Set(kept.map((s) => s.item.key))]
    const got = await this.unlessClosed(this.#holding(keys, () => this.#fetchMany(keys)))
    let out = value
    for (const s of kept) out = place(out, s.path, got.get(s.item.key))
    return kept.length === slots.length ? out : dropAt(out, slots.filter((s) => failed(s.item)).map((s) => s.path))
  }

  holdUntilDone(key: string): void {
    if (!this.scheduler.closed) holdUntilDone(this.scheduler, key)
  }

  retry(keys: string[]): void {
    this.check()
    retryErred(this.scheduler, keys)
  }

  close(): void {
    this.#closeWaits(new ClusterClosedError('client'))
    this.#data.close()
  }
}
