// Work held up by stuck workers (paused, unable to spill, no progress; see
// worker/stuck.ts). A run waiting on a stuck worker moves to a worker that
// is not stuck where it may run; where none is left, it fails with the
// stuck workers' error (ERR_SPILLWAY_SPILL_FULL when their disks are full)
// instead of waiting forever, and so do its dependents. Values the workers
// already hold are kept.

import { allowed } from './placement'
import type { StuckReport } from '../wire/protocol'
import { stuckError } from '../wire/stuck-error'
import type { TaskRecord } from './state'
import type { WorkerHandle } from './state'

/** What stuck-work needs of the scheduler. */
export interface StuckWorkHost {
  readonly workers: Map<string, WorkerHandle>
  readonly queue: { readonly length: number; at(i: number): TaskRecord }
  /** Takes a run back from a worker (it skips it) and queues it again. */
  withdraw(t: TaskRecord, w: WorkerHandle): void
  fail(t: TaskRecord, error: Error): void
}

export function settleStuckWork(s: StuckWorkHost): void {
  const stuck: WorkerHandle[] = []
  const healthy: WorkerHandle[] = []
  for (const w of s.workers.values()) (w.stuck ? stuck : healthy).push(w)
  if (stuck.length === 0) return
  const canRun = (t: TaskRecord) => healthy.some((w) => allowed(w, t))
  const errorFor = (t: TaskRecord) => {
    const mine = stuck.filter((w) => allowed(w, t))
    return stuckError((mine.length ? mine : stuck).map((w) => ({ worker: w.name, report: w.stuck as StuckReport })), t.key)
  }
  for (const w of stuck) for (const t of [...w.processing]) s.withdraw(t, w)
  const blocked: TaskRecord[] = []
  for (let i = 0; i < s.queue.length; i++) {
    const t = s.queue.at(i)
    if (t.state === 'queued' && !canRun(t)) blocked.push(t)
  }
  for (const t of blocked) if (t.state === 'queued') s.fail(t, errorFor(t))
}
