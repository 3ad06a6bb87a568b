// A worker's metrics arrive (a heartbeat, or the answer to a run or a
// query): the cluster's peaks follow, and a worker newly stuck or back from
// a pause changes what can be placed.

import type { WorkerMetrics } from '../wire/protocol'
import type { WorkerHandle } from './state'
import { settleStuckWork, type StuckWorkHost } from './stuck-work'
import { markResponsive, type WatchdogHost } from './watchdog'
import type { ClusterTotals } from './totals'
import { watchPaused, type PausedRestartHost } from './paused-restart'

/** What this needs of the scheduler. */
export interface HeartbeatHost extends StuckWorkHost, WatchdogHost, PausedRestartHost {
  peakMemoryBytes: number
  peakSpillBytes: number
  totals(): ClusterTotals
}

export function onHeartbeat(s: HeartbeatHost, w: WorkerHandle, m: WorkerMetrics): void {
  const wasPaused = w.status === 'paused'
  const newlyStuck = m.stuck !== undefined && m.stuck.since !== w.stuckSince
  w.metrics = m
  markResponsive(s, w)
  if (!m.stuck) w.stuck = undefined
  watchPaused(s, w, m)
  const t = s.totals()
  s.peakMemoryBytes = Math.max(s.peakMemoryBytes, t.memoryBytes)
  s.peakSpillBytes = Math.max(s.peakSpillBytes, t.spillBytes)
  if (newlyStuck) {
    w.stuck = m.stuck
    w.stuckSince = m.stuck!.since
    s.emit('worker-stuck', w, m.stuck)
    settleStuckWork(s)
    s.pump()
  } else if (wasPaused && m.status === 'running') s.pump()
}
