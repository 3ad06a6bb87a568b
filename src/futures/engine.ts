// The client's side of futures: turns submit / map / scatter / gather into
// scheduler tasks and back. Values come back from the workers' data servers
// over the same authenticated sockets workers use among themselves.

import { createHash, randomUUID } from 'node:crypto'
import { DataClient } from '../comm/data-client'
import type { Scheduler } from '../scheduler/scheduler'
import type { TaskRecord } from '../scheduler/state'
import { ArgumentError, ClusterClosedError, SpillwayError } from '../base/errors'
import type { TaskFunction } from '../wire/functions'
import { Future, Share, type FutureOwner } from './future'
import { scatterTooLarge } from './scatter-limit'
import { decodeValue, encodeValue } from '../wire/values'
import { holdUntilDone } from './fire-and-forget'
import { retryErred } from './retry'
import { replicate } from '../scheduler/rebalance'
import { gatherErrors, type GatherOptions } from './gather-options'
import { signalOf, unlessAborted } from '../base/abort'
import { scatterOptionProblems, scatterShaped, type ScatterOptions } from './scatter-options'
import { gatherPlan, mapTasks, submitTask, type MapOptions, type SubmitOptions, type Submitter } from './submission'

export type { SubmitOptions, MapOptions } from './submission'

function cancelledError(key: string): SpillwayError {
  return new SpillwayError('ERR_SPILLWAY_CANCELLED', `task ${JSON.stringify(key)} was cancelled`, { key })
}

export class FutureEngine implements FutureOwner, Submitter {
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

  record(key: string, share: Share): TaskRecord | undefined {
    return (share.record as TaskRecord | undefined) ?? this.scheduler.tasks.get(key)
  }

  isCurrent(key: string, share: Share): boolean {
    return share.record !== undefined && this.scheduler.tasks.get(key) === share.record
  }

  share(key: string): Share {
    const t = this.scheduler.tasks.get(key)
    let s = this.#shares.get(key)
    if (!s || s.record !== t) this.#shares.set(key, (s = new Share(t)))
    s.holds++
    return s
  }

  release(key: string, share: Share): void {
    share.holds--
    if (share.holds <= 0 && this.#shares.get(key) === share) this.#shares.delete(key)
    // A cancelled share let go of all its holds when it was cancelled; one
    // of an earlier generation holds nothing the key has now.
    if (!share.cancelled && !this.scheduler.closed && this.isCurrent(key, share)) this.scheduler.release([key])
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
      const t = this.scheduler.tasks.get(key)
      const share = this.#shares.get(key)
      if (!share || !t || share.record !== t || t.refs <= share.holds || t.state === 'erred') {
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

  readonly owner: FutureOwner = this
  holds = (key: string): boolean => this.scheduler.tasks.has(key)

  submit(fn: TaskFunction, args: unknown = [], options: SubmitOptions = {}): Future {
    this.check()
    const [t] = this.scheduler.submit([{ ...submitTask(this, fn, args, options), expectedBytes: 1 }])
    return new Future(t.key, this)
  }

  /** One task per call of `iterables` (one iterable: `fn(item)`; several: zipped, `fn(a, b, …)`). */
  map(fn: TaskFunction, iterables: unknown[], options: MapOptions = {}): Future[] {
    this.check()
    const subs = mapTasks(this, fn, iterables, options).map((s) => ({ ...s, expectedBytes: 1 }))
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
    const signal = signalOf(options, 'gather')
    // Aborted, the holds it took go once the fetches in flight end; the Futures are the caller's.
    return unlessAborted(signal, (async () => {
      const plan = await gatherPlan(this, nested, skip)
      return plan.fill(await this.unlessClosed(this.#holding(plan.keys, () => this.#fetchMany(plan.keys))))
    })())
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
