// The worker's reaction to its own process memory, as Dask's
// WorkerMemoryManager: above `spill`, spill LRU chunks until the process is
// back under `target`; above `pause`, take no new tasks. `terminate` is the
// nanny's business, watched from outside.

import type { Thresholds, WorkerStatus } from './protocol'

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

const FIELDS = ['target', 'spill', 'pause', 'terminate'] as const

/** Checks that thresholds are fractions in (0, 1] and strictly increasing. */
export function thresholdProblems(t: Thresholds): string[] {
  const problems: string[] = []
  for (const f of FIELDS) {
    if (typeof t[f] !== 'number' || !(t[f] > 0 && t[f] <= 1)) problems.push(`${f} ${t[f]} is not a fraction in (0, 1]`)
  }
  for (let i = 1; i < FIELDS.length; i++) {
    if (!(t[FIELDS[i - 1]] < t[FIELDS[i]])) problems.push(`${FIELDS[i - 1]} (${t[FIELDS[i - 1]]}) must be below ${FIELDS[i]} (${t[FIELDS[i]]})`)
  }
  return problems
}
