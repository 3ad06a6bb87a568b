// The scheduler's own figures for each worker, as the recipe reads them:
// never disk usage, which measures the whole filesystem.

import type { Client } from '../client/client'
import { workerInMemoryBytes, workerSpillBytes } from '../wire/metrics'
import type { StuckReport, Thresholds, WorkerMetrics, WorkerStatus } from '../wire/protocol'

export { workerInMemoryBytes, workerSpillBytes }

export interface WorkerInfo {
  address: string
  name: string
  /** The node it runs on. */
  host: string
  pid: number
  memoryLimit: number
  nthreads: number
  status: WorkerStatus
  /** It left a request unanswered past the scheduler's timeout (a task blocking its event loop?): no new work goes to it until it answers again. */
  unresponsive: boolean
  /** Set while the worker is stuck: paused, unable to spill, no progress (why, where it spills, free and waiting bytes). */
  stuck?: StuckReport
  thresholds: Thresholds
  /** Chunks the scheduler has placed on this worker (held or running). */
  tasks: { held: number; processing: number }
  metrics: WorkerMetrics | Record<string, never>
}

/** Every worker, keyed by address, with fresh heartbeat metrics. */
export async function schedulerWorkers(client: Client): Promise<Record<string, WorkerInfo>> {
  await client.scheduler.refreshMetrics()
  const out: Record<string, WorkerInfo> = {}
  for (const [address, w] of client.scheduler.workers) {
    out[address] = {
      address,
      name: w.name,
      host: w.host,
      pid: w.pid,
      memoryLimit: w.memoryLimit,
      nthreads: w.nthreads,
      status: w.status,
      unresponsive: w.unresponsive,
      ...(w.stuck ? { stuck: w.stuck } : {}),
      thresholds: w.metrics?.thresholds ?? client.scheduler.thresholds,
      tasks: { held: w.held.size, processing: w.processing.size },
      metrics: w.metrics ?? {},
    }
  }
  return out
}

export interface MemorySnapshot {
  workers: number
  memoryGib: number
  spillGib: number
}

/** Memory and spill summed over all workers (the recipe's cluster_memory_snapshot). */
export async function clusterMemorySnapshot(client: Client, fresh = true): Promise<MemorySnapshot> {
  if (fresh) await client.scheduler.refreshMetrics()
  let mem = 0
  let spill = 0
  for (const w of client.scheduler.workers.values()) {
    mem += workerInMemoryBytes(w.metrics)
    spill += workerSpillBytes(w.metrics)
  }
  return { workers: client.scheduler.workers.size, memoryGib: mem / 2 ** 30, spillGib: spill / 2 ** 30 }
}
