// Work sent ahead to a worker that stays busy moves to one that is idle
// (Dask's work stealing, in its plainest form). Tasks go to a worker's own
// queue ahead of time (PREFETCH per thread, state.ts), so tiny tasks do not
// each wait a round trip; but a worker whose threads are held by long runs
// (a future that never settles, a slow step) kept that queue for good while
// another idled, and a compute waiting on it never answered.
//
// The rule: when some worker has a free thread, every other running worker
// that holds more tasks than threads and has finished none for
// STEAL_AFTER_MS is asked to give back the runs it has not started. It gives back only those
// (its runner skips them; a skipped answer requeues the task, and placement
// puts it on a worker with a free thread first), so a steal never runs a
// task twice. A task pinned to its worker stays: restrictions (a shuffle's
// output at its owner among them), a scattered value, a set preference; so
// does one whose inputs on that worker pass MOVE_BYTES (placement.ts: worth
// waiting for rather than moving).
// Each run is asked about once.

import { MOVE_BYTES } from './placement'
import type { TaskRecord, WorkerHandle } from './state'

/** How long a worker holding queued work may finish nothing before that work is taken back. */
export const STEAL_AFTER_MS = 1_000
/** How often the scheduler looks. */
export const STEAL_CHECK_MS = 500

/** Input bytes a stolen task may leave behind on its worker (to be fetched by the thief): placement's bound for moving inputs. */
const inputsHeldOn = (t: TaskRecord, w: WorkerHandle) => t.deps.reduce((n, d) => n + (d.worker === w ? d.nbytes : 0), 0)
const movable = (t: TaskRecord, w: WorkerHandle) => t.state === 'processing' && !t.restrict && !t.scattered && !t.preferred && inputsHeldOn(t, w) <= MOVE_BYTES

/** Keys to take back, by the worker that holds them (empty where nothing should move). */
export function steals(workers: Iterable<WorkerHandle>, now: number, asked: WeakMap<TaskRecord, number>): Map<WorkerHandle, TaskRecord[]> {
  const all = [...workers]
  const out = new Map<WorkerHandle, TaskRecord[]>()
  if (!all.some((w) => w.available && w.busy < w.nthreads)) return out
  for (const w of all) {
    // A paused or stuck worker is not busy but held up: its queue waits for memory, and taking it back would only look like progress to its stuck watch.
    if (!w.alive || w.status !== 'running' || w.stuck || w.processing.size <= w.nthreads || now - w.lastDone < STEAL_AFTER_MS) continue
    const take = [...w.processing].filter((t) => movable(t, w) && asked.get(t) !== t.runs)
    if (take.length) out.set(w, take)
  }
  return out
}

/** What stealing needs of its scheduler. */
export interface StealHost {
  readonly workers: Map<string, WorkerHandle>
}

/** Looks for work to take back every STEAL_CHECK_MS; the function returned stops it. */
export function watchForSteals(host: StealHost): () => void {
  const asked = new WeakMap<TaskRecord, number>()
  const timer = setInterval(() => {
    for (const [w, tasks] of steals(host.workers.values(), Date.now(), asked)) {
      for (const t of tasks) {
        asked.set(t, t.runs)
        t.stolenFrom = w
      }
      w.rpc.request({ op: 'steal', keys: tasks.map((t) => t.key) }).catch(() => {})
    }
  }, STEAL_CHECK_MS)
  timer.unref()
  return () => clearInterval(timer)
}
