// The scheduler's state: one task in its graph (TaskRecord) and one worker
// incarnation (WorkerHandle). They refer to each other, as Dask's TaskState
// and WorkerState do, so they live together.
//
// A task's states follow Dask's: waiting (for its
// inputs), queued (for a worker), processing (sent to one), memory (held by
// one), erred, and released (its value freed, kept only so dependents that
// must be computed again can make it again).

import { hostname } from 'node:os'
import { SpillwayError } from '../base/errors'
import type { ValueFormat } from '../wire/values'
import type { Inputs, StuckReport, TaskFn, WorkerMetrics, WorkerStatus } from '../wire/protocol'
import type { WorkerRpc } from '../comm/rpc'

export type TaskState = 'waiting' | 'queued' | 'processing' | 'memory' | 'erred' | 'released'

export interface Waiter {
  resolve(): void
  reject(e: unknown): void
}

/** The error of a key no one holds any more; made only when someone is waiting on it. */
export function releasedError(key: string): SpillwayError {
  return new SpillwayError('ERR_SPILLWAY_RELEASED', `key ${key} was released`, { key })
}

export class TaskRecord {
  state: TaskState = 'queued'
  worker: WorkerHandle | undefined
  nbytes = 0
  /** Workers that died while running this task (Dask's "suspicious"). */
  suspicious = 0
  /** Runs sent so far: a reply to an earlier one (withdrawn, then sent again) is not this run's. */
  runs = 0
  lastWorker: string | undefined
  error: Error | undefined
  readonly waiters = new Set<Waiter>()
  deps: TaskRecord[] = []
  /** Records that take this one's value as an input. */
  readonly dependents = new Set<TaskRecord>()
  /** Holders outside the scheduler: Futures, persisted arrays. */
  refs = 0
  /** Reruns left after a thrown error. */
  retries = 0
  priority = 0
  seq = 0
  /** Worker addresses or names it may run on; undefined for any. */
  restrict: Set<string> | undefined
  /** The busy worker it was taken back from (stealing.ts): placed elsewhere while that one stays busy. */
  stolenFrom: WorkerHandle | undefined
  format: ValueFormat = 'v8'
  /** What the dashboard groups it under: the function's name or the array's. */
  group = ''
  /** A scattered value: no task makes it, a backup copy restores it. */
  scattered = false
  /** Its latest run as sent: where it was told to find its inputs (a run that misses one blames that copy alone). */
  sent: { inputs?: Inputs } | undefined
  /** Workers holding a copy besides `worker` (replicate, broadcast): one takes over should `worker` be lost. */
  replicas: Set<WorkerHandle> | undefined
  /** The record a retry put in its place: its Futures read that run (a key merely submitted again is another generation). */
  successor: TaskRecord | undefined
  /** Where a scattered value goes first (Dask's round robin over the workers); anywhere once that worker is gone. */
  preferred: WorkerHandle | undefined

  constructor(
    readonly key: string,
    readonly task: TaskFn | undefined,
    readonly expectedBytes: number,
  ) {}

  /** Its value is wanted: a holder, or a dependent still to run. */
  get needed(): boolean {
    if (this.refs > 0) return true
    for (const d of this.dependents) if (d.state === 'waiting' || d.state === 'queued' || d.state === 'processing') return true
    return false
  }

  settle() {
    for (const w of this.waiters) {
      if (this.state === 'memory') w.resolve()
      else if (this.state === 'erred') w.reject((this.error ??= releasedError(this.key)))
      else continue
      this.waiters.delete(w)
    }
  }

  whenInMemory(): Promise<void> {
    if (this.state === 'memory') return Promise.resolve()
    if (this.state === 'erred') return Promise.reject((this.error ??= releasedError(this.key)))
    return new Promise((resolve, reject) => this.waiters.add({ resolve, reject }))
  }

  /** Settled one way or the other (for wait() and asCompleted). */
  whenDone(): Promise<void> {
    return this.whenInMemory().catch(() => {})
  }
}

/** A task as submitted: what it runs, what it takes, and how the scheduler may place it. */
export interface TaskSubmission {
  key: string
  task: TaskFn
  expectedBytes: number
  /** Keys whose values the task takes (they must be known to the scheduler). */
  deps?: string[]
  format?: ValueFormat
  group?: string
  priority?: number
  retries?: number
  /** Worker addresses or names it may run on. */
  workers?: string[]
  /** False for a task only its dependents need: not held by the caller, freed once they have run. */
  hold?: boolean
}

// One worker incarnation as the scheduler sees it: its address, capacity,
// the tasks it is running and holding, and its latest heartbeat.

/** Tasks sent ahead per worker thread. */
export const PREFETCH = 4

export class WorkerHandle {
  readonly processing = new Set<TaskRecord>()
  readonly held = new Set<TaskRecord>()
  /** Values it holds a copy of while another worker is their holder (see TaskRecord.replicas). */
  readonly replicas = new Set<TaskRecord>()
  heldBytes = 0
  inflight = 0
  /** Runs among `inflight` that gave their slot back while they wait on their own sub-tasks (task-clients.ts). */
  seceded = 0
  alive = true
  metrics: WorkerMetrics | undefined
  pid = 0
  /** Where its data server listens: other workers fetch its values there. */
  dataAddress = ''
  /** The node it runs on (os.hostname() there); this node's for local workers. */
  host = hostname()
  /** The batch job it runs in, for workers that joined from a job. */
  jobId: string | undefined
  readonly startedAt = Date.now()
  /** Set while it leaves a request unanswered past RESPONSE_TIMEOUT_MS (watchdog.ts). */
  unresponsive = false
  /** Set by its nanny as it kills it for memory: the figures it saw, for the error of the task it ran. */
  killedFor: { rss: number; terminate: number } | undefined
  /** Set by whoever started it: ends this incarnation (its nanny starts the next). */
  restart: ((reason: string) => void) | undefined

  constructor(
    readonly address: string,
    readonly name: string,
    readonly nthreads: number,
    readonly memoryLimit: number,
    readonly rpc: WorkerRpc,
  ) {}

  /** Its channel closed and its exit status is not in yet: it takes nothing more. */
  closing = false
  /** Its end was asked for (retired, restarted by client.restart()): not counted among lost workers (Dask's remove_worker(expected=True)). */
  expectedExit = false
  /** Being retired (retire.ts): it takes no new work while its values move to other workers. */
  retiring = false
  /** The retirement under way (retire.ts): a second call waits on it rather than start another. */
  retirement: Promise<unknown> | undefined
  /** When a run of it last ended (or it joined): one holding queued work that finishes nothing has it taken back (stealing.ts). */
  lastDone = Date.now()
  /** Since when it has been paused by memory its store cannot spill (paused-restart.ts). */
  unmanagedPausedSince: number | undefined
  /** Set by whoever started it: stops this worker for good (no next incarnation), once retired. */
  close: (() => Promise<void>) | undefined

  get status(): WorkerStatus {
    if (this.closing) return 'closing'
    if (this.retiring) return 'closing_gracefully'
    return this.metrics?.status ?? 'running'
  }

  /**
   * The worker's report while it is stuck (paused, unable to spill, no
   * progress). Cleared as soon as something is released there: freeing
   * values is progress, and the worker reports again if it stays stuck.
   */
  stuck: StuckReport | undefined
  /** The start of the stuck episode last taken up, so a stale report is not taken up twice. */
  stuckSince = 0

  /**
   * Free to take another task: alive, answering, not paused, and fewer than
   * PREFETCH tasks per thread sent ahead (the worker queues them, so tiny
   * tasks do not each wait a round trip).
   */
  get available(): boolean {
    return this.alive && !this.unresponsive && this.status === 'running' && this.busy < this.nthreads * PREFETCH
  }

  /** Runs sent that hold, or wait for, one of its threads. */
  get busy(): number {
    return Math.max(0, this.inflight - this.seceded)
  }

  /** Bytes this worker holds or will hold once its running tasks finish. */
  load(): number {
    let pending = 0
    for (const t of this.processing) pending += t.expectedBytes
    return this.heldBytes + pending
  }
}
