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
import type { WorkerHandle } from './state'

/** What this needs of the scheduler. */
export interface PausedRestartHost extends RetireHost {
  readonly pausedRestartMs: number
}

/** Unmanaged: even with every managed value in memory spilled, the process would stay past `pause`. */
export function pausedByUnmanaged(m: WorkerMetrics, memoryLimit: number): boolean {
  return m.status === 'paused' && m.rss - m.memoryBytes > m.thresholds.pause * memoryLimit
}

export function watchPaused(host: PausedRestartHost, w: WorkerHandle, m: WorkerMetrics, now = Date.now()): void {
  if (!pausedByUnmanaged(m, w.memoryLimit)) {
    w.unmanagedPausedSince = undefined
    return
  }
  w.unmanagedPausedSince ??= now
  if (now - w.unmanagedPausedSince < host.pausedRestartMs || w.retiring || !w.restart) return
  const restart = w.restart
  host.emit('worker-paused-restart', w, (now - w.unmanagedPausedSince) / 1000)
  retireWorkers(host, [w], { closeWorkers: false, drainMs: 0 })
    .catch((e) => host.emit('worker-retire-failed', w, e))
    .finally(() => {
      if (w.alive) restart('restarted: paused by unmanaged memory')
    })
}
