// The worker's reaction to its own process memory, as Dask's
// WorkerMemoryManager: above `spill`, spill LRU chunks until the process is
// back under `target`; above `pause`, take no new tasks. `terminate` is the
// nanny's business, watched from outside.

import type { Thresholds, WorkerStatus } from '../wire/protocol'

export interface MemoryAction {
  status: WorkerStatus
  /** Spill until at most this many managed bytes stay in memory. */
  evictTo?: number
}

export function memoryAction(rss: number, limit: number, t: Thresholds, memoryBytes: number): MemoryAction {
  const action: MemoryAction = { status: rss > t.pause * limit ? 'paused' : 'running' }
  if (rss > t.spill * limit && memoryBytes > 0) {
    const excess = rss - t.target * limit
    action.evictTo = Math.max(0, Math.floor(memoryBytes - excess))
  }
  return action
}
