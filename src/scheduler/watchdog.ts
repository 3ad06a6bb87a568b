// Work that would otherwise wait for ever on one worker. A run no one wants
// any more (cancelled, or its key released or garbage-collected with no
// dependent left) is aborted on its worker (its taskContext().signal). One
// that does not stop (it ignores its signal, or blocks the event loop) keeps
// its slot: after a grace period its worker is restarted, and what it held
// is made again as for any lost worker. A worker that does not answer a
// request in time (its event loop is blocked by a task) is marked
// unresponsive: nothing new is sent to it, and the tasks sent ahead that it
// has not started go to other workers. It is responsive again at its next
// heartbeat. A long task that is still wanted is never stopped for its length.

import type { TaskRecord, WorkerHandle } from './state'

/** How long a cancelled task may keep running before its worker is restarted. */
export const CANCEL_GRACE_MS = 5_000
/** How long a task whose key was released may keep running before its worker is restarted (the releasedTaskGrace option). */
export const RELEASED_GRACE_MS = 60_000
/** How long a worker may take to answer a request before it counts as unresponsive. */
export const RESPONSE_TIMEOUT_MS = 5_000

/** What the watchdog needs of the scheduler. */
export interface WatchdogHost {
  withdraw(t: TaskRecord, w: WorkerHandle): void
  emit(event: string, ...args: unknown[]): boolean
  pump(): void
}

/** Runs aborted on each worker that have not stopped yet: they hold threads the scheduler no longer counts. */
const unstopped = new WeakMap<WorkerHandle, number>()

/**
 * Aborts the run of `key` on `w`, which no one wants any more (`why`: it
 * was cancelled, or released). A worker that does not answer the abort in
 * time is unresponsive; one whose run (`settled`) has not ended after
 * `graceMs` is restarted.
 */
export function stopRun(host: WatchdogHost, w: WorkerHandle, key: string, settled: Promise<unknown> | undefined, graceMs: number, why: 'cancelled' | 'released'): void {
  const answered = w.rpc.request({ op: 'cancel', key })
  const slow = setTimeout(() => markUnresponsive(host, w, RESPONSE_TIMEOUT_MS), RESPONSE_TIMEOUT_MS)
  slow.unref()
  answered.then(
    () => clearTimeout(slow),
    () => clearTimeout(slow),
  )
  watchCancelled(w, key, settled, graceMs, why)
}

/** Restarts `w` unless the run `settled` ends within the grace period. */
export function watchCancelled(w: WorkerHandle, key: string, settled: Promise<unknown> | undefined, graceMs = CANCEL_GRACE_MS, why: 'cancelled' | 'released' = 'cancelled'): void {
  if (!settled) return
  let done = false
  unstopped.set(w, (unstopped.get(w) ?? 0) + 1)
  const timer = setTimeout(() => {
    if (done || !w.alive) return
    const what = why === 'cancelled' ? 'was cancelled' : 'was released (no Future or dependent holds it)'
    w.restart?.(`task ${JSON.stringify(key)} ${what} ${graceMs / 1000} s ago and is still running: restarting its worker`)
  }, graceMs)
  timer.unref()
  const stop = () => {
    if (done) return
    done = true
    clearTimeout(timer)
    unstopped.set(w, (unstopped.get(w) ?? 1) - 1)
  }
  settled.then(stop, stop)
}

export function markUnresponsive(host: WatchdogHost, w: WorkerHandle, afterMs: number): void {
  if (w.unresponsive || !w.alive) return
  w.unresponsive = true
  host.emit('worker-unresponsive', w, afterMs)
  // As many as it has threads are taken as the ones it is running; the rest
  // were sent ahead and wait behind them. Threads still held by aborted runs
  // (no longer among `processing`) run none of them.
  const running = Math.max(0, w.nthreads - (unstopped.get(w) ?? 0))
  for (const t of [...w.processing].slice(running)) host.withdraw(t, w)
  host.pump()
}

export function markResponsive(host: WatchdogHost, w: WorkerHandle): void {
  if (!w.unresponsive) return
  w.unresponsive = false
  host.emit('worker-responsive', w)
  host.pump()
}
