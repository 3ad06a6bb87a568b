// Work that would otherwise wait for ever on one worker. A cancelled task
// that does not stop (it ignores its abort signal, or blocks the event loop)
// keeps its slot: after a grace period its worker is restarted, and what it
// held is made again as for any lost worker. A worker that does not answer a
// request in time (its event loop is blocked by a task) is marked
// unresponsive: nothing new is sent to it, and the tasks sent ahead that it
// has not started go to other workers. It is responsive again at its next
// heartbeat.

import type { TaskRecord, WorkerHandle } from './state'

/** How long a cancelled task may keep running before its worker is restarted. */
export const CANCEL_GRACE_MS = 5_000
/** How long a worker may take to answer a request before it counts as unresponsive. */
export const RESPONSE_TIMEOUT_MS = 5_000

/** What the watchdog needs of the scheduler. */
export interface WatchdogHost {
  withdraw(t: TaskRecord, w: WorkerHandle): void
  emit(event: string, ...args: unknown[]): boolean
  pump(): void
}

/** Restarts `w` unless the run `settled` ends within the grace period. */
export function watchCancelled(w: WorkerHandle, key: string, settled: Promise<unknown> | undefined, graceMs = CANCEL_GRACE_MS): void {
  if (!settled) return
  let done = false
  const timer = setTimeout(() => {
    if (done || !w.alive) return
    w.restart?.(`task ${JSON.stringify(key)} was cancelled ${graceMs / 1000} s ago and is still running: restarting its worker`)
  }, graceMs)
  timer.unref()
  const stop = () => {
    done = true
    clearTimeout(timer)
  }
  settled.then(stop, stop)
}

export function markUnresponsive(host: WatchdogHost, w: WorkerHandle, afterMs: number): void {
  if (w.unresponsive || !w.alive) return
  w.unresponsive = true
  host.emit('worker-unresponsive', w, afterMs)
  // As many as it has threads are taken as the ones it is running; the rest
  // were sent ahead and wait behind them.
  for (const t of [...w.processing].slice(w.nthreads)) host.withdraw(t, w)
  host.pump()
}

export function markResponsive(host: WatchdogHost, w: WorkerHandle): void {
  if (!w.unresponsive) return
  w.unresponsive = false
  host.emit('worker-responsive', w)
  host.pump()
}
