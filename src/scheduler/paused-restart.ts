// A worker paused by memory its store cannot spill (a task's own buffers,
// a leak, memory not given back to the OS) stays paused for good in Dask
// (distributed #5999). Here, once it has been paused that way for
// `pausedRestartMs`, its values move to the other workers (retire.ts, its
// running tasks sent elsewhere) and it is restarted: a fresh process, with
// nothing to recompute. Should the others not take its values, it is
// restarted all the same and they are made again: a worker paused for good
// would hold them up forever.

import type { WorkerMetrics } from '../wire/protocol'
import { retireWorkers, type RetireHost } from './retire'
import { pausedByUnmanaged } from './copy-values'
import type { WorkerHandle } from './state'

/** What this needs of the scheduler. */
export interface PausedRestartHost extends RetireHost {
  readonly pausedRestartMs: number
}


/** How long its values may take to move before it is restarted all the same. */
export const RETIRE_TIMEOUT_MS = 5 * 60_000

export function watchPaused(host: PausedRestartHost, w: WorkerHandle, m: WorkerMetrics, now = Date.now()): void {
  if (!pausedByUnmanaged(m, w.memoryLimit)) {
    w.unmanagedPausedSince = undefined
    return
  }
  w.unmanagedPausedSince ??= now
  if (now - w.unmanagedPausedSince < host.pausedRestartMs || w.retiring || !w.restart) return
  const restart = w.restart
  host.emit('worker-paused-restart', w, (now - w.unmanagedPausedSince) / 1000)
  let timer: NodeJS.Timeout | undefined
  // A move that hangs (a peer that never answers) must not keep the worker paused for good either.
  const late = new Promise((resolve) => (timer = setTimeout(resolve, RETIRE_TIMEOUT_MS)))
  Promise.race([retireWorkers(host, [w], { closeWorkers: false, drainMs: 0 }), late])
    .catch((e) => host.emit('worker-retire-failed', w, e))
    .finally(() => {
      clearTimeout(timer)
      if (w.alive) restart('restarted: paused by unmanaged memory')
    })
}
