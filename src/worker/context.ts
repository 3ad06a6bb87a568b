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

const SLOT = Symbol.for('spillway.taskContext')
const g = globalThis as unknown as Record<symbol, AsyncLocalStorage<Stored> | undefined>
const storage: AsyncLocalStorage<Stored> = (g[SLOT] ??= new AsyncLocalStorage<Stored>())

export function runInTask<T>(ctx: TaskContext, fn: () => T, services?: TaskServices): T {
  return storage.run(services ? { ...ctx, [SERVICES]: services } : ctx, fn)
}

function noTask(what: string): SpillwayError {
  return new SpillwayError('ERR_SPILLWAY_NO_TASK', `${what} is only available inside a task running on a worker`)
}

/** The running task's context; throws outside a task. */
export function taskContext(): TaskContext {
  const ctx = storage.getStore()
  if (!ctx) throw noTask('taskContext()')
  return ctx
}

/** The running task's services; `what` names the caller in the error outside a task. */
export function taskServices(what: string): TaskServices {
  const s = storage.getStore()?.[SERVICES]
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
