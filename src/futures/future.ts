// A Future: a handle on a value a worker computes or holds. Returned at once
// by submit and map; not a thenable, so awaiting a call never hides it
// (`await f.result()`). Each Future holds its key on the cluster until it
// is released or garbage collected.

import { signalOf, unlessAborted } from '../base/abort'
import { ArgumentError, SpillwayError } from '../base/errors'
import type { TaskRecord } from '../scheduler/state'

export type FutureStatus = 'pending' | 'finished' | 'error' | 'cancelled' | 'lost'

/**
 * One client's hold on a key, shared by its Futures of that key. A cancel
 * while other clients hold the key ends this client's share alone (Dask
 * cancels per client): its Futures read cancelled, the others' go on.
 */
export class Share {
  holds = 0
  cancelled: SpillwayError | undefined
  readonly #waiting = new Set<(e: SpillwayError) => void>()
  #record: KeyRecord | undefined

  /**
   * `record`: the generation of the key this share holds. A key submitted
   * again after it failed, or after client.restart(), is a new record: the
   * old Futures keep reading (and releasing) the old one, as Dask's
   * generations of a key stay apart.
   */
  constructor(record?: KeyRecord) {
    this.#record = record
  }

  /** The record this share holds, or the one a retry put in its place. */
  get record(): KeyRecord | undefined {
    while (this.#record?.successor) this.#record = this.#record.successor
    return this.#record
  }

  cancel(e: SpillwayError): void {
    this.cancelled = e
    for (const reject of this.#waiting) reject(e)
    this.#waiting.clear()
  }

  /** `p`, or the cancel's error should this share be cancelled first. */
  race<T>(p: Promise<T>): Promise<T> {
    if (this.cancelled) return Promise.reject(this.cancelled)
    return new Promise<T>((resolve, reject) => {
      this.#waiting.add(reject)
      p.then(resolve, reject).finally(() => this.#waiting.delete(reject))
    })
  }
}

/** What a Future reads of its key: the scheduler's record, or a task client's view of it. */
export type KeyRecord = Pick<TaskRecord, 'state' | 'error' | 'whenInMemory'> & { readonly successor?: KeyRecord }

/** What a Future needs from the client that made it. */
export interface FutureOwner {
  readonly id: string
  /** `share`'s record while the owner can read it (undefined once its client or task has ended). */
  record(key: string, share: Share): KeyRecord | undefined
  fetch(key: string): Promise<unknown>
  cancel(keys: string[]): void
  /** One more Future of `key`: the client's share of its current generation. */
  share(key: string): Share
  release(key: string, share: Share): void
  /** Whether `share` holds the key's current generation. */
  isCurrent(key: string, share: Share): boolean
  /** `p`, or the owner's ClusterClosedError should it close first: nothing waits on a closed client. */
  unlessClosed<T>(p: Promise<T>): Promise<T>
  /** The cluster holds `key` itself until its task is done (fireAndForget). */
  holdUntilDone(key: string): void
  /** Runs the erred tasks of `keys` (and the erred tasks they take as inputs) again. */
  retry(keys: string[]): void
}

const registry = new FinalizationRegistry<{ owner: FutureOwner; key: string; share: Share }>(({ owner, key, share }) => owner.release(key, share))

/** `T`: the value's type, as the task function returns it (awaited). */
export class Future<T = any> {
  #released = false
  readonly #share: Share

  constructor(
    readonly key: string,
    readonly owner: FutureOwner,
  ) {
    this.#share = owner.share(key)
    registry.register(this, { owner, key, share: this.#share }, this)
  }

  /** Set when this client's share of the key was cancelled while others still hold it. */
  get cancelledError(): SpillwayError | undefined {
    return this.#released ? undefined : this.#share.cancelled
  }

  /** The record while this Future holds its key. */
  #record(): KeyRecord | undefined {
    return this.#released || this.#share.cancelled ? undefined : this.owner.record(this.key, this.#share)
  }

  /**
   * Whether this Future holds the key's current generation: false for one
   * made before the key was submitted again (after it failed, or after
   * client.restart()), whose task ended for good.
   */
  get current(): boolean {
    return !this.#released && !this.#share.cancelled && this.owner.isCurrent(this.key, this.#share)
  }

  get released(): boolean {
    return this.#released
  }

  get status(): FutureStatus {
    if (this.cancelledError) return 'cancelled'
    const r = this.#record()
    if (!r) return 'lost'
    if (r.state === 'memory') return 'finished'
    if (r.state === 'erred') return (r.error as SpillwayError | undefined)?.code === 'ERR_SPILLWAY_CANCELLED' ? 'cancelled' : 'error'
    return 'pending'
  }

  get done(): boolean {
    const s = this.status
    return s !== 'pending'
  }

  #live(): KeyRecord {
    if (this.cancelledError) throw this.cancelledError
    const r = this.#record()
    if (!r) {
      throw new SpillwayError('ERR_SPILLWAY_RELEASED', `future ${JSON.stringify(this.key)} was released${this.#released ? '' : ' (or its cluster closed)'}`, { key: this.key })
    }
    return r
  }

  /** Resolves when the task has finished, failed or been cancelled. */
  async settled(): Promise<void> {
    if (this.cancelledError) return
    await this.owner.unlessClosed(this.#share.race(this.#live().whenInMemory()).catch(() => {}))
  }

  /**
   * The value, fetched from the worker that holds it; rejects with the
   * task's error. `{ signal }`: aborting it rejects with the signal's
   * reason; the Future stays (`cancel()` stops its task).
   */
  async result(options?: { signal?: AbortSignal }): Promise<T> {
    const signal = signalOf(options, 'result')
    return unlessAborted(signal, (async () => {
      await this.owner.unlessClosed(this.#share.race(this.#live().whenInMemory()))
      // fetch holds the key itself until the value is in: this Future may be
      // collected meanwhile (`await client.submit(...).result()` keeps none).
      return this.owner.unlessClosed(this.#share.race(this.owner.fetch(this.key))) as Promise<T>
    })())
  }

  /** The task's error once it has failed, or undefined once it has finished. */
  async exception(): Promise<Error | undefined> {
    try {
      await this.owner.unlessClosed(this.#share.race(this.#live().whenInMemory()))
      return undefined
    } catch (e) {
      return e as Error
    }
  }

  /** Drops queued work, aborts running work (its taskContext().signal), fails dependents with ERR_SPILLWAY_CANCELLED. */
  cancel(): void {
    // An earlier generation has ended (failed or cancelled): its key's cancel is the new generation's.
    if (this.current) this.owner.cancel([this.key])
  }

  /**
   * Runs an erred or cancelled task again (Dask's Future.retry), with the
   * erred tasks it takes as inputs; `await f.result()` then gives the new
   * run's value. A Future that has not failed is left as it is.
   */
  retry(): void {
    if (this.cancelledError) {
      // Only this client's share was cancelled: the task itself goes on for the clients that still hold it.
      throw new ArgumentError([{ field: 'future', value: this.key, allowed: 'a Future whose task failed or was cancelled on the cluster (this client let go of a key other clients hold: submit it again)' }], 'retry')
    }
    this.#live()
    if (!this.current) {
      throw new ArgumentError([{ field: 'future', value: this.key, allowed: 'a Future of the key as it is now (this one was made before the key was submitted again, or before client.restart(): use the new Future)' }], 'retry')
    }
    this.owner.retry([this.key])
  }

  /**
   * Calls `fn(this)` once, when the task finishes, fails or is cancelled
   * (on a later tick if it already has). Not called if the Future is
   * released or its client closes first. A callback that throws (or
   * rejects) is reported on stderr: it never takes the client down.
   */
  addDoneCallback(fn: (future: this) => unknown): void {
    if (typeof fn !== 'function') throw new ArgumentError([{ field: 'fn', value: fn, allowed: 'a function, called with the Future' }], 'addDoneCallback')
    const report = (e: unknown) => console.error(`spillway: the done callback of future ${JSON.stringify(this.key)} failed:`, e)
    this.settled().then(
      () => {
        if (this.status === 'pending' || this.#released) return
        try {
          Promise.resolve(fn(this)).catch(report)
        } catch (e) {
          report(e)
        }
      },
      () => {},
    )
  }

  /** Lets go of this Future's hold on its key; the value is freed once nothing needs it. */
  release(): void {
    if (this.#released) return
    this.#released = true
    registry.unregister(this)
    this.owner.release(this.key, this.#share)
  }

  toString(): string {
    return `<Future: ${this.status}, key: ${this.key}>`
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString()
  }
}
