// Dask's fire_and_forget: a task that runs to completion though the caller
// drops every Future of it. The hold is the scheduler's own, not a
// Future's, so neither garbage collection nor closing the client ends it;
// it lets go once the task is done, and the value is then freed as any
// other no one holds.

import { ArgumentError } from '../base/errors'
import type { Scheduler } from '../scheduler/scheduler'
import { Future } from './future'

/** Holds `key` on the cluster until its task finishes, fails or is cancelled. */
export function holdUntilDone(scheduler: Scheduler, key: string): void {
  const t = scheduler.tasks.get(key)
  if (!t || t.state === 'memory' || t.state === 'erred' || t.state === 'released') return
  t.refs++
  void t.whenDone().then(() => {
    // A record forgotten meanwhile (the cluster closed) has nothing left to let go of.
    if (!scheduler.closed && scheduler.tasks.get(key) === t) scheduler.release([key])
  })
}

/**
 * Runs each Future's task to completion even when every Future of it is
 * dropped (Dask's fire_and_forget); its value is freed once it is done.
 * Takes a Future, or Futures nested in arrays and plain objects.
 */
export function fireAndForget(futures: unknown): void {
  const found: Future[] = []
  const walk = (v: unknown, field: string): void => {
    if (v instanceof Future) found.push(v)
    else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${field}[${i}]`))
    else if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) for (const [k, x] of Object.entries(v)) walk(x, `${field}[${JSON.stringify(k)}]`)
    else throw new ArgumentError([{ field, value: v, allowed: 'a Future, or Futures in arrays and plain objects' }], 'fireAndForget arguments')
  }
  walk(futures, 'futures')
  for (const f of found) {
    if (f.released) throw new ArgumentError([{ field: 'futures', value: f.key, allowed: 'Futures that are still held (this one was released)' }], 'fireAndForget arguments')
  }
  for (const f of found) if (!f.cancelledError) f.owner.holdUntilDone(f.key)
}
