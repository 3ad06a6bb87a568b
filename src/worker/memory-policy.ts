// The worker's reaction to its own process memory, as Dask's
// WorkerMemoryManager: above `spill`, spill LRU chunks until the process is
// back under `target` (under `spill` itself when target is off, as Dask's
// `target or spill`); above `pause`, take no new tasks. With `spill` off,
// process memory never spills. `terminate` is the nanny's business,
// watched from outside.

import { spillFloor } from '../config/thresholds'
import type { Thresholds, WorkerStatus } from '../wire/protocol'

export interface MemoryAction {
  status: WorkerStatus
  /** Spill until at most this many managed bytes stay in memory. */
  evictTo?: number
}

export function memoryAction(rss: number, limit: number, t: Thresholds, memoryBytes: number): MemoryAction {
  const action: MemoryAction = { status: rss > t.pause * limit ? 'paused' : 'running' }
  const floor = spillFloor(t)
  if (t.spill !== false && floor !== false && rss > t.spill * limit && memoryBytes > 0) {
    const excess = rss - floor * limit
    action.evictTo = Math.max(0, Math.floor(memoryBytes - excess))
  }
  return action
}
