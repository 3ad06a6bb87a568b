// Runs tasks on a worker: at most `nthreads` at once and none while paused;
// the rest wait for a slot, the next ones loading their inputs meanwhile. A
// run released or cancelled while it waits is skipped; a running one sees
// its signal abort.

import { SpillwayError } from '../base/errors'
import { runInTask, runSync } from './context'
import { place } from '../wire/nesting'
import { decodeValue, elementSizeOfFormat, encodeRaw, encodeValue, type ValueFormat } from '../wire/values'
import type { WorkerStore } from './store'
import type { Inputs as InputSpec, RunResult, TaskFn, WorkerStatus } from '../wire/protocol'
import type { FnDesc } from '../wire/functions'
import { Gate } from './gate'
import type { Inputs, Lease } from './inputs'
import { taskFailure, UserFunctions, type Callable, type NativeServices } from './user-functions'
import { RunServices } from './run-services'
import type { SchedulerCalls } from './scheduler-calls'

interface Loaded {
  fn: Callable
  values: Map<string, Uint8Array>
  lease: Lease
}

export class TaskRunner {
  readonly counts = { executing: 0, done: 0, failed: 0 }
  /** Seconds spent running tasks, summed over the slots that ran them. */
  taskSeconds = 0
  readonly #functions: UserFunctions
  // Runs execute through `slots`; the next ones load their function and
  // inputs through `loads` meanwhile, so reading a spilled input or fetching
  // one from a peer overlaps the run before it. A load holds its permit until
  // its run starts: at most `nthreads` runs wait with their inputs in memory.
  readonly #slots: Gate
  readonly #loads: Gate
  // Requests are numbered so a run sent after a release (the key submitted
  // again) still runs, while one sent before it is skipped.
  #seq = 0
  readonly #waiting = new Map<string, number>()
  readonly #releasedAt = new Map<string, number>()
  readonly #controllers = new Map<string, AbortController>()
  /** Per key, the runs still waiting for a load or a slot: released (or given back to the scheduler), they stop waiting at once. */
  readonly #queued = new Map<string, Set<AbortController>>()
  /** The last result size of each function: what its next run will likely allocate. */
  readonly #lastBytes = new Map<string, number>()

  constructor(
    nthreads: number,
    status: () => WorkerStatus,
    private readonly buffer: WorkerStore,
    private readonly inputs: Inputs,
    private readonly address: string,
    private readonly memory: { makeRoom(bytes: number): Promise<void>; collectNow(): void; cannotStore(key: string, bytes: number): Error | undefined; checkSoon(): void },
    natives?: NativeServices,
    /** Where a task's own sub-tasks go (getClient()); none, and getClient() fails in a task. */
    private readonly calls?: SchedulerCalls,
    /** How long a task module may take to import (user-functions.ts). */
    importTimeoutMs?: number,
  ) {
    this.#functions = new UserFunctions(natives, importTimeoutMs)
    const running = () => status() === 'running'
    this.#slots = new Gate(nthreads, running)
    this.#loads = new Gate(nthreads, running)
  }

  /** Starts waiting runs and loads while there is room and the worker is not paused. */
  startReady() {
    this.#slots.wake()
    this.#loads.wake()
  }

  async run(key: string, task: TaskFn, spec: InputSpec = {}): Promise<RunResult> {
    // Keyed by user keys: an input named '__proto__' must be read as an own entry, never as the prototype.
    const who: InputSpec = Object.assign(Object.create(null), spec)
    const seq = ++this.#seq
    // Made before the wait for a slot, so a cancel that comes while the
    // function loads or its inputs arrive is not lost.
    const controller = new AbortController()
    this.#controllers.set(key, controller)
    this.#waiting.set(key, (this.#waiting.get(key) ?? 0) + 1)
    const queued = new AbortController()
    let mine = this.#queued.get(key)
    if (!mine) this.#queued.set(key, (mine = new Set()))
    mine.add(queued)
    try {
      return await this.#run(key, task, who, seq, controller, queued)
    } finally {
      mine.delete(queued)
      if (!mine.size && this.#queued.get(key) === mine) this.#queued.delete(key)
      this.#doneWaiting(key)
      if (this.#controllers.get(key) === controller) this.#controllers.delete(key)
    }
  }

  #doneWaiting(key: string) {
    const left = (this.#waiting.get(key) ?? 1) - 1
    if (left > 0) this.#waiting.set(key, left)
    else {
      this.#waiting.delete(key)
      this.#releasedAt.delete(key)
    }
  }

  #skip(key: string, seq: number, controller: AbortController): boolean {
    return (this.#releasedAt.get(key) ?? 0) > seq || controller.signal.aborted
  }

  async #run(key: string, task: TaskFn, who: InputSpec, seq: number, controller: AbortController, queued: AbortController): Promise<RunResult> {
    let loaded: Loaded | undefined
    let loading = false
    try {
      if (task.fn === 'call') {
        // Imported before a load permit is taken: a module slow to load (or
        // never loading: importTimeout) holds up no other module's tasks.
        const fn = await this.#functions.get(task.func)
        if (!(await this.#loads.acquireUnless(queued.signal))) return { nbytes: 0, skipped: true }
        loading = true
        if (this.#skip(key, seq, controller)) return { nbytes: 0, skipped: true }
        loaded = await this.#load(task, who, fn)
      }
      // Memory as it is now, not as of the last timer check: a worker past
      // `pause` starts nothing more.
      this.memory.checkSoon()
      if (!(await this.#slots.acquireUnless(queued.signal))) {
        loaded?.lease.release()
        return { nbytes: 0, skipped: true }
      }
    } catch (e) {
      this.counts.failed++
      loaded?.lease.release()
      throw e
    } finally {
      if (loading) this.#loads.release()
    }
    if (this.#skip(key, seq, controller)) {
      this.#slots.release()
      loaded?.lease.release()
      return { nbytes: 0, skipped: true }
    }
    // Started: a release from here on no longer takes it back.
    this.#queued.get(key)?.delete(queued)
    this.counts.executing++
    const started = performance.now()
    const services = task.fn === 'call' && this.calls ? new RunServices(String(seq), this.calls, this.inputs, this.#slots, key) : undefined
    try {
      const result = task.fn === 'chunk' ? { nbytes: await this.#generate(key, task.spec) } : await this.#call(key, task, who, loaded!, controller, services)
      this.counts.done++
      return result
    } catch (e) {
      this.counts.failed++
      throw e
    } finally {
      loaded?.lease.release()
      this.taskSeconds += (performance.now() - started) / 1000
      this.counts.executing--
      // A run that ends seceded has no slot to give back.
      if (!services || services.end()) this.#slots.release()
    }
  }

  /**
   * A chunk made natively, straight into the store: room is made first for
   * it and for the copy its spill encodes, or a chunk that is a large share
   * of the worker lands on a store at its target and crosses `terminate`
   * (128 MB chunks killed 1 GiB workers that way).
   */
  async #generate(key: string, spec: Extract<TaskFn, { fn: 'chunk' }>['spec']): Promise<number> {
    await this.memory.makeRoom(2 * spec.len * 8)
    return this.buffer.generate(key, spec)
  }

  /** The function and the inputs of a call, read back or fetched, with room made for them and for its result. */
  async #load(task: Extract<TaskFn, { fn: 'call' }>, who: InputSpec, fn: Callable): Promise<Loaded> {
    let inputBytes = 0
    for (const d of task.deps) inputBytes += who[d.key]?.nbytes ?? 0
    // Its inputs, its result and the store's copy of it.
    await this.memory.makeRoom(inputBytes + 2 * (this.#lastBytes.get(task.func.id) ?? 0))
    const got = await this.inputs.get(task.deps.map((d) => d.key), who, { shared: readsOnly(task.func) })
    return { fn, values: got.values, lease: got.lease }
  }

  async #call(key: string, task: Extract<TaskFn, { fn: 'call' }>, who: InputSpec, loaded: Loaded, controller: AbortController, services?: RunServices): Promise<{ nbytes: number; format: ValueFormat }> {
    let args = task.args
    for (const d of task.deps) args = place(args, d.path, decodeValue(loaded.values.get(d.key)!, who[d.key].format))
    let result: unknown
    try {
      const ctx = { key, signal: controller.signal, worker: this.address }
      const fn = loaded.fn
      const call = () => fn(...(Array.isArray(args) ? args : [args]))
      // spillway's own task kinds hand the context to the user's functions they call; a user's task keeps it across its awaits.
      result = await (task.func.kind === 'native' ? runSync(ctx, call, services) : runInTask(ctx, call, services))
    } catch (e) {
      throw Object.assign(new SpillwayError('ERR_SPILLWAY_TASK', ''), taskFailure(e, key, task.func))
    }
    if (controller.signal.aborted) throw cancelled(key)
    const { bytes, format } = task.dtype ? { bytes: encodeRaw(result, task.dtype, `${task.func.label} for ${key}`), format: `raw:${task.dtype}` as const } : encodeValue(result, `the result of task ${JSON.stringify(key)} (${task.func.label})`)
    // Inputs are dropped before the result is stored.
    loaded.lease.release()
    loaded.values.clear()
    // A result that fits neither in memory nor on the spill disk fails the
    // task: stored anyway it would cross `terminate`, and the nanny would
    // kill the worker, and the next, for the same result.
    const problem = this.memory.cannotStore(key, bytes.length)
    if (problem) throw problem
    await this.buffer.set(key, bytes, elementSizeOfFormat(format))
    this.#lastBytes.set(task.func.id, bytes.length)
    // The task's own copy is garbage now; freed at once it never adds to the next task's peak.
    if (bytes.length >= LARGE) this.memory.collectNow()
    return { nbytes: bytes.length, format }
  }

  /**
   * Calls a function outside the task graph (client.run): no slot, no
   * stored result, the value goes back to the caller as it is encoded.
   */
  async callOutside(func: FnDesc, args: unknown[]): Promise<{ value: Uint8Array; format: ValueFormat }> {
    const fn = await this.#functions.get(func)
    const key = `run-${func.label}`
    let result: unknown
    try {
      result = await runInTask({ key, signal: new AbortController().signal, worker: this.address }, () => fn(...args))
    } catch (e) {
      throw Object.assign(new SpillwayError('ERR_SPILLWAY_TASK', ''), taskFailure(e, key, func))
    }
    const { bytes, format } = encodeValue(result)
    return { value: bytes, format }
  }

  /** Skips the key's waiting runs; a released key needs no result. */
  release(key: string) {
    if (!this.#waiting.has(key)) return
    this.#releasedAt.set(key, ++this.#seq)
    for (const q of this.#queued.get(key) ?? []) q.abort()
  }

  cancel(key: string) {
    this.release(key)
    this.#controllers.get(key)?.abort(cancelled(key))
  }
}

/**
 * spillway's own frame kernels, which only read their inputs' IPC bytes
 * (the core parses them; nothing in JS sees them): those get the stored
 * bytes themselves, not a copy. mapBatches is not one: the user's function
 * gets Arrow vectors that view the bytes, and could write to them.
 */
const READ_ONLY_OPS = new Set(['frame.partition', 'frame.combine', 'frame.join', 'frame.sample', 'frame.boundaries', 'frame.split', 'frame.write'])

function readsOnly(func: FnDesc): boolean {
  return func.kind === 'native' && READ_ONLY_OPS.has(func.op)
}

/** Results this large are worth a collection once stored. */
const LARGE = 16 * 2 ** 20

function cancelled(key: string): SpillwayError {
  return new SpillwayError('ERR_SPILLWAY_CANCELLED', `task ${JSON.stringify(key)} was cancelled`, { key })
}
