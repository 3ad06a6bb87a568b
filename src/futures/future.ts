// A Future: a handle on a value a worker computes or holds. Returned at once
// by submit and map; not a thenable, so awaiting a call never hides it
// (`await f.result()`). Each Future holds its key on the cluster until it
// is released or garbage collected.

import { SpillwayError } from '../base/errors'
import type { TaskRecord } from '../scheduler/state'

export type FutureStatus = 'pending' | 'finished' | 'error' | 'cancelled' | 'lost'

/** What a Future needs from the client that made it. */
export interface FutureOwner {
  readonly id: string
  record(key: string): TaskRecord | undefined
  fetch(key: string): Promise<unknown>
  cancel(keys: string[]): void
  release(key: string): void
  /** `p`, or the owner's ClusterClosedError should it close first: nothing waits on a closed client. */
  unlessClosed<T>(p: Promise<T>): Promise<T>
}

const registry = new FinalizationRegistry<{ owner: FutureOwner; key: string }>(({ owner, key }) => owner.release(key))

export class Future {
  #released = false

  constructor(
    readonly key: string,
    readonly owner: FutureOwner,
  ) {
    registry.register(this, { owner, key }, this)
  }

  /** The record while this Future holds its key. */
  #record(): TaskRecord | undefined {
    return this.#released ? undefined : this.owner.record(this.key)
  }

  get released(): boolean {
    return this.#released
  }

  get status(): FutureStatus {
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

  #live(): TaskRecord {
    const r = this.#record()
    if (!r) {
      throw new SpillwayError('ERR_SPILLWAY_RELEASED', `future ${JSON.stringify(this.key)} was released${this.#released ? '' : ' (or its cluster closed)'}`, { key: this.key })
    }
    return r
  }

  /** Resolves when the task has finished, failed or been cancelled. */
  async settled(): Promise<void> {
    await this.owner.unlessClosed(this.#live().whenDone())
  }

  /** The value, fetched from the worker that holds it; rejects with the task's error. */
  async result(): Promise<unknown> {
    await this.owner.unlessClosed(this.#live().whenInMemory())
    return this.owner.unlessClosed(this.owner.fetch(this.key))
  }

  /** The task's error once it has failed, or undefined once it has finished. */
  async exception(): Promise<Error | undefined> {
    try {
      await this.owner.unlessClosed(this.#live().whenInMemory())
      return undefined
    } catch (e) {
      return e as Error
    }
  }

  /** Drops queued work, aborts running work (its taskContext().signal), fails dependents with ERR_SPILLWAY_CANCELLED. */
  cancel(): void {
    if (!this.#released) this.owner.cancel([this.key])
  }

  /** Lets go of this Future's hold on its key; the value is freed once nothing needs it. */
  release(): void {
    if (this.#released) return
    this.#released = true
    registry.unregister(this)
    this.owner.release(this.key)
  }

  toString(): string {
    return `<Future: ${this.status}, key: ${this.key}>`
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString()
  }
}
