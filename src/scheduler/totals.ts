// Memory and spill summed over the live workers' latest heartbeats.

import type { WorkerHandle } from './state'

export interface ClusterTotals {
  workers: number
  memoryBytes: number
  spillBytes: number
}

export function clusterTotals(workers: Map<string, WorkerHandle>): ClusterTotals {
  let memoryBytes = 0
  let spillBytes = 0
  for (const w of workers.values()) {
    if (!w.metrics) continue
    memoryBytes += w.metrics.managedBytes - w.metrics.spilledBytes.memory
    spillBytes += w.metrics.spilledBytes.disk
  }
  return { workers: workers.size, memoryBytes, spillBytes }
}
