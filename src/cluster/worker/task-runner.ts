// Runs tasks on a worker: at most `nthreads` at once and none while paused;
// the rest wait for a slot. A run released or cancelled while it waits is
// skipped; a running one sees its signal abort.

import { SpillwayError } from '../../errors'
import { runInTask } from '../../futures/context'
import { place } from '../../futures/nesting'
import { decodeValue, encodeRaw, encodeValue, type ValueFormat } from '../../futures/values'
import type { WorkerStore } from './store'
import type { Inputs as InputSpec, RunResult, TaskFn, WorkerStatus } from '../protocol'
import type { Inputs } from './inputs'
import { taskFailure, UserFunctions } from './user-functions'

export class TaskRunner {
  readonly counts = { executing: 0, done: 0, failed: 0 }
  readonly #functions = new UserFunctions()
  readonly #ready: Array<() => void> = []
  #running = 0
  // Requests are numbered so a run sent after a release (the key submitted
  // again) still runs, while one sent before it is skipped.
  #seq = 0
  readonly #waiting = new Map<string, number>()
  readonly #releasedAt = new Map<string, number>()
  readonly #controllers = new Map<string, AbortController>()
  /** The last result size of each function: what its next run will likely allocate. */
  readonly #lastBytes = new Map<string, number>()

  constructor(
    private readonly nthreads: number,
    private readonly status: () => WorkerStatus,
    private readonly buffer: WorkerStore,
    private readonly inputs: Inputs,
    private readonly address: string,
    private readonly memory: { makeRoom(bytes: number): Promise<void>; collectNow(): void },
  ) {}

  #slot(): Promise<void> {
    if (this.#running < this.nthreads && this.status() === 'running' && this.#ready.length === 0) {
      this.#running++
      return Promise.resolve()
    }
    return new Promise((resolve) => this.#ready.push(resolve))
  }

  #freeSlot() {
    this.#running--
    this.startReady()
  }

  /** Starts waiting runs while slots are free and the worker is not paused. */
  startReady() {
    while (this.#ready.length && this.#running < this.nthreads && this.status() === 'running') {
      this.#running++
      this.#ready.shift()!()
    }
  }

  async run(key: string, task: TaskFn, who: InputSpec = {}): Promise<RunResult> {
    const seq = ++this.#seq
    // Made before the wait for a slot, so a cancel that comes while the
    // function loads or its inputs arrive is not lost.
    const controller = new AbortController()
    this.#controllers.set(key, controller)
    try {
      return await this.#run(key, task, who, seq, controller)
    } finally {
      if (this.#controllers.get(key) === controller) this.#controllers.delete(key)
    }
  }

  async #run(key: string, task: TaskFn, who: InputSpec, seq: number, controller: AbortController): Promise<RunResult> {
    this.#waiting.set(key, (this.#waiting.get(key) ?? 0) + 1)
    try {
      await this.#slot()
    } finally {
      const left = this.#waiting.get(key)! - 1
      if (left) this.#waiting.set(key, left)
      else this.#waiting.delete(key)
    }
    const released = (this.#releasedAt.get(key) ?? 0) > seq || controller.signal.aborted
    if (!this.#waiting.has(key)) this.#releasedAt.delete(key)
    if (released) {
      this.#freeSlot()
      return { nbytes: 0, skipped: true }
    }
    this.counts.executing++
    try {
      const result = task.fn === 'chunk' ? { nbytes: await this.buffer.generate(key, task.spec) } : await this.#call(key, task, who, controller)
      this.counts.done++
      return result
    } catch (e) {
      this.counts.failed++
      throw e
    } finally {
      this.counts.executing--
      this.#freeSlot()
    }
  }

  async #call(key: string, task: Extract<TaskFn, { fn: 'call' }>, who: InputSpec, controller: AbortController): Promise<{ nbytes: number; format: ValueFormat }> {
    let lease: { release(): void } | undefined
    try {
      const fn = await this.#functions.get(task.func)
      // Its inputs (read back or fetched), its result and the store's copy of it.
      let inputBytes = 0
      for (const d of task.deps) inputBytes += who[d.key]?.nbytes ?? 0
      await this.memory.makeRoom(inputBytes + 2 * (this.#lastBytes.get(task.func.id) ?? 0))
      const got = await this.inputs.get(task.deps.map((d) => d.key), who)
      lease = got.lease
      if (controller.signal.aborted) throw cancelled(key)
      let args = task.args
      for (const d of task.deps) args = place(args, d.path, decodeValue(got.values.get(d.key)!, who[d.key].format))
      let result: unknown
      try {
        const ctx = { key, signal: controller.signal, worker: this.address }
        result = await runInTask(ctx, () => fn(...(Array.isArray(args) ? args : [args])))
      } catch (e) {
        throw Object.assign(new SpillwayError('ERR_SPILLWAY_TASK', ''), taskFailure(e, key, task.func))
      }
      if (controller.signal.aborted) throw cancelled(key)
      const { bytes, format } = task.dtype ? { bytes: encodeRaw(result, task.dtype, `${task.func.label} for ${key}`), format: `raw:${task.dtype}` as const } : encodeValue(result)
      // Inputs fetched from peers are dropped before the result is stored.
      lease?.release()
      lease = undefined
      await this.buffer.set(key, bytes)
      this.#lastBytes.set(task.func.id, bytes.length)
      // The task's own copy is garbage now; freed at once it never adds to the next task's peak.
      if (bytes.length >= LARGE) this.memory.collectNow()
      return { nbytes: bytes.length, format }
    } finally {
      lease?.release()
    }
  }

  /** Skips the key's waiting runs; a released key needs no result. */
  release(key: string) {
    if (this.#waiting.has(key)) this.#releasedAt.set(key, ++this.#seq)
  }

  cancel(key: string) {
    this.release(key)
    this.#controllers.get(key)?.abort(cancelled(key))
  }
}

/** Results this large are worth a collection once stored. */
const LARGE = 16 * 2 ** 20

function cancelled(key: string): SpillwayError {
  return new SpillwayError('ERR_SPILLWAY_CANCELLED', `task ${JSON.stringify(key)} was cancelled`, { key })
}
