// Readers of a worker's heartbeat metrics, as the recipe reads them: what
// it holds in memory and what it has spilled to disk.

import type { WorkerMetrics } from './protocol'

type MetricsLike = Partial<Pick<WorkerMetrics, 'managedBytes' | 'spilledBytes'>> | undefined | null

/** Managed bytes held in memory: managed minus the spilled part (as Dask). */
export function workerInMemoryBytes(metrics: MetricsLike): number {
  if (!metrics) return 0
  return Math.max(0, (metrics.managedBytes ?? 0) - (metrics.spilledBytes?.memory ?? 0))
}

/** Spilled bytes on disk, after compression. */
export function workerSpillBytes(metrics: MetricsLike): number {
  return metrics?.spilledBytes?.disk ?? 0
}
