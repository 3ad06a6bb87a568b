// taskContext(): inside a running task, its key, the signal that aborts when
// the task is cancelled, and the worker's address. Kept on a global symbol so
// a user module that imports its own copy of spillway sees the same store;
// so are the run's services (getClient(), secede(), rejoin()), which the
// worker's copy provides and the user's copy uses.

import { AsyncLocalStorage } from 'node:async_hooks'
import { SpillwayError } from '../base/errors'
import type { Inputs, TaskCall } from '../wire/protocol'

export interface TaskContext {
  key: string
  signal: AbortSignal
  worker: string
}

/** What a running task's client needs of its worker (run-services.ts provides it). */
export interface TaskServices {
  /** Names this run to the scheduler: what it holds is let go of when it ends. */
  readonly run: string
  /** The key of the task this run runs: what it submits must not wait on it (ERR_SPILLWAY_CYCLE). */
  readonly key?: string
  /** Set once the run has returned: its client takes no more calls. */
  readonly ended: boolean
  call<T>(call: TaskCall): Promise<T>
  /** A call whose answer no one waits for; sent in order with the others. */
  tell(call: TaskCall): void
  /** Values where the scheduler said they are, read from this worker's store or its peers' data servers. */
  fetch(who: Inputs): Promise<Map<string, Uint8Array>>
  /** `p`, with the run's slot given back while it is pending (Dask's secede and rejoin around a wait). */
  during<T>(p: Promise<T>): Promise<T>
  secede(): void
  rejoin(): Promise<void>
  /** The run's client (getClient()), made on first use. */
  client?: unknown
}

const SERVICES = Symbol.for('spillway.taskServices')
type Stored = TaskContext & { [SERVICES]?: TaskServices }
/** A task's context with its services, as a task kind run by runSync hands it to the user's functions it calls. */
export type TaskStore = Stored

const SLOT = Symbol.for('spillway.taskContext')
const SYNC = Symbol.for('spillway.taskContext.sync')
const g = globalThis as unknown as Record<symbol, any>
const storage: AsyncLocalStorage<Stored> = (g[SLOT] ??= new AsyncLocalStorage<Stored>())
/** The context of the code running now, where it was entered synchronously (runSync, callInTask). */
const sync: { store: Stored | undefined } = (g[SYNC] ??= { store: undefined })

/**
 * Whether this Node's AsyncLocalStorage tracks every promise made while it
 * is enabled (async_hooks' promise hooks: Node 20, and 22 without
 * --experimental-async-context-frame), which made each promise three times
 * dearer; from Node 24 it is an AsyncContextFrame and costs nothing then.
 * The hooked one has an `enabled` flag; the frame-based one has none.
 */
const HOOKED = typeof (storage as unknown as { enabled?: unknown }).enabled === 'boolean'
/** Runs under `storage` that have not ended, where it is hooked: at none it is disabled, and its hooks with it. */
let hookedRuns = 0

function storeOf(ctx: TaskContext, services?: TaskServices): Stored {
  return services ? { ...ctx, [SERVICES]: services } : ctx
}

/**
 * Runs a user's task function with its context, kept across its awaits by
 * AsyncLocalStorage. Where that is hooked, it is enabled only while such a
 * run is under way: spillway's own task kinds run by runSync do not pay for it.
 */
export function runInTask<T>(ctx: TaskContext, fn: () => T, services?: TaskServices): T {
  return runInStore(storeOf(ctx, services), fn)
}

/** `fn` in the task's context, kept across its awaits (a custom reduction's functions may be async). */
export function runInStore<T>(store: TaskStore, fn: () => T): T {
  if (!HOOKED) return storage.run(store, fn)
  hookedRuns++
  let out: T
  try {
    out = storage.run(store, fn)
  } catch (e) {
    hookedRunEnded()
    throw e
  }
  if (out !== null && typeof out === 'object' && typeof (out as { then?: unknown }).then === 'function') Promise.resolve(out).then(hookedRunEnded, hookedRunEnded)
  else hookedRunEnded()
  return out
}

function hookedRunEnded(): void {
  if (--hookedRuns === 0) storage.disable()
}

/**
 * Runs `fn` with the task's context for as long as it runs synchronously,
 * with no AsyncLocalStorage: for spillway's own task kinds (bag partitions,
 * shuffles, rechunks), which read currentStore() at once and give the
 * context back to each user function they call (callInTask), after any await.
 */
export function runSync<T>(ctx: TaskContext, fn: () => T, services?: TaskServices): T {
  const prev = sync.store
  sync.store = storeOf(ctx, services)
  try {
    return fn()
  } finally {
    sync.store = prev
  }
}

/** The running task's context and services, if code runs in one. */
export function currentStore(): TaskStore | undefined {
  return sync.store ?? storage.getStore()
}

/** `f(a)` in the task's context: a step's call, one per item (two stores, no promise, no hook). */
export function callInTask<R>(store: TaskStore, f: (a: unknown) => R, a: unknown): R {
  const prev = sync.store
  sync.store = store
  try {
    return f(a)
  } finally {
    sync.store = prev
  }
}

/** `f(a, b)` in the task's context: a binop's call. */
export function callInTask2<R>(store: TaskStore, f: (a: unknown, b: unknown) => R, a: unknown, b: unknown): R {
  const prev = sync.store
  sync.store = store
  try {
    return f(a, b)
  } finally {
    sync.store = prev
  }
}

function noTask(what: string): SpillwayError {
  return new SpillwayError('ERR_SPILLWAY_NO_TASK', `${what} is only available inside a task running on a worker`)
}

/** The running task's context; throws outside a task. */
export function taskContext(): TaskContext {
  const ctx = sync.store ?? storage.getStore()
  if (!ctx) throw noTask('taskContext()')
  return ctx
}

/** The running task's services; `what` names the caller in the error outside a task. */
export function taskServices(what: string): TaskServices {
  const s = (sync.store ?? storage.getStore())?.[SERVICES]
  if (!s) throw noTask(what)
  return s
}

/**
 * Gives the running task's slot back to its worker (Dask's secede): another
 * task may run there meanwhile, and the scheduler does not count this one
 * against the worker's threads. Waiting on a sub-task's Future does this by itself.
 */
export function secede(): void {
  taskServices('secede()').secede()
}

/** Takes a slot again after secede() (Dask's rejoin): resolves once the task has one. */
export function rejoin(): Promise<void> {
  return taskServices('rejoin()').rejoin()
}
