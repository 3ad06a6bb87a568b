// The scheduler's view of one worker incarnation: its address, capacity,
// the tasks it is running and holding, and its latest heartbeat.

import { hostname } from 'node:os'
import type { StuckReport, WorkerMetrics, WorkerStatus } from './protocol'
import type { WorkerRpc } from './rpc'
import type { TaskRecord } from './task-record'

/** Tasks sent ahead per worker thread. */
export const PREFETCH = 4

export class WorkerHandle {
  readonly processing = new Set<TaskRecord>()
  readonly held = new Set<TaskRecord>()
  heldBytes = 0
  inflight = 0
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

  constructor(
    readonly address: string,
    readonly name: string,
    readonly nthreads: number,
    readonly memoryLimit: number,
    readonly rpc: WorkerRpc,
  ) {}

  get status(): WorkerStatus {
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
   * Free to take another task: alive, not paused, and fewer than
   * PREFETCH tasks per thread sent ahead (the worker queues them, so tiny
   * tasks do not each wait a round trip).
   */
  get available(): boolean {
    return this.alive && this.status === 'running' && this.inflight < this.nthreads * PREFETCH
  }

  /** Bytes this worker holds or will hold once its running tasks finish. */
  load(): number {
    let pending = 0
    for (const t of this.processing) pending += t.expectedBytes
    return this.heldBytes + pending
  }
}
