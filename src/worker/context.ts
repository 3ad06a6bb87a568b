// taskContext(): inside a running task, its key, the signal that aborts when
// the task is cancelled, and the worker's address. Kept on a global symbol so
// a user module that imports its own copy of spillway sees the same store.

import { AsyncLocalStorage } from 'node:async_hooks'
import { SpillwayError } from '../base/errors'

export interface TaskContext {
  key: string
  signal: AbortSignal
  worker: string
}

const SLOT = Symbol.for('spillway.taskContext')
const g = globalThis as unknown as Record<symbol, AsyncLocalStorage<TaskContext> | undefined>
const storage: AsyncLocalStorage<TaskContext> = (g[SLOT] ??= new AsyncLocalStorage<TaskContext>())

export function runInTask<T>(ctx: TaskContext, fn: () => T): T {
  return storage.run(ctx, fn)
}

/** The running task's context; throws outside a task. */
export function taskContext(): TaskContext {
  const ctx = storage.getStore()
  if (!ctx) throw new SpillwayError('ERR_SPILLWAY_NO_TASK', 'taskContext() is only available inside a task running on a worker')
  return ctx
}
