// One run's services for the tasks it submits (getClient()): calls to the
// scheduler under the run's name, values fetched as a run's inputs are, and
// the run's slot, given back while the task waits on its sub-tasks (Dask's
// secede / rejoin) so a task that waits on tasks it submitted never holds
// the only thread they could run on.

import type { Inputs as InputSpec, TaskCall } from '../wire/protocol'
import type { TaskServices } from './context'
import type { Gate } from './gate'
import type { Inputs } from './inputs'
import type { SchedulerCalls } from './scheduler-calls'

export class RunServices implements TaskServices {
  client?: unknown
  #ended = false
  /** The slot is given back (or on its way back: #taking). */
  #out = false
  #taking: Promise<void> | undefined
  /** Waits under way: the slot comes back when the last ends. */
  #waits = 0
  /** secede() was called: only rejoin() takes the slot back. */
  #explicit = false
  /** Something was asked of the scheduler: it has holds or a secede to undo at the end. */
  #used = false

  constructor(
    readonly run: string,
    private readonly calls: SchedulerCalls,
    private readonly inputs: Inputs,
    private readonly slots: Gate,
    readonly key?: string,
  ) {}

  get ended(): boolean {
    return this.#ended
  }

  call<T>(call: TaskCall): Promise<T> {
    this.#used = true
    return this.calls.call<T>(call)
  }

  tell(call: TaskCall): void {
    this.#used = true
    this.calls.tell(call)
  }

  async fetch(who: InputSpec): Promise<Map<string, Uint8Array>> {
    const got = await this.inputs.get(Object.keys(who), who, { wait: false })
    // Decoded at once by the caller: the in-flight bytes were only in flight.
    got.lease.release()
    return got.values
  }

  async during<T>(p: Promise<T>): Promise<T> {
    this.#waits++
    this.#giveBack()
    try {
      return await p
    } finally {
      this.#waits--
      if (this.#waits === 0 && !this.#explicit) await this.#takeBack()
    }
  }

  secede(): void {
    this.#explicit = true
    this.#giveBack()
  }

  async rejoin(): Promise<void> {
    this.#explicit = false
    if (this.#waits === 0) await this.#takeBack()
  }

  #giveBack(): void {
    if (this.#out || this.#ended) return
    this.#out = true
    this.slots.release()
    this.tell({ op: 'secede', run: this.run })
  }

  #takeBack(): Promise<void> {
    if (!this.#out || this.#ended) return Promise.resolve()
    this.#taking ??= (async () => {
      await this.slots.acquire()
      this.#taking = undefined
      // The task returned while this waited: the runner did not count the slot as held.
      if (this.#ended) return this.slots.release()
      this.#out = false
      this.tell({ op: 'rejoin', run: this.run })
      // A wait that began meanwhile gives it back again.
      if (this.#waits > 0 || this.#explicit) this.#giveBack()
    })()
    return this.#taking
  }

  /**
   * The run is over: what it holds is let go of on the scheduler. Returns
   * whether it holds its slot, which the runner then releases.
   */
  end(): boolean {
    if (this.#ended) return false
    this.#ended = true
    if (this.#used) this.tell({ op: 'done', run: this.run })
    return !this.#out
  }
}
