// Copies values from one worker to another (retirement, rebalance,
// replicate): the receiver fetches them from the holder's data server, as
// it would a task's inputs, so nothing passes through the scheduler and a
// spilled value travels as its compressed frame. A copy that lands after
// its key was let go of, or moved on, is freed again at once.

import type { AcquireResult, WorkerMetrics } from '../wire/protocol'
import type { TaskRecord, WorkerHandle } from './state'
import { holders, type ReplicaHost } from './replicas'

/** What this needs of the scheduler. */
export interface CopyHost extends ReplicaHost {
  onHeartbeat(w: WorkerHandle, m: WorkerMetrics): void
}

export interface CopyOutcome {
  /** Now on `to` as well, still a live value. */
  copied: TaskRecord[]
  /** `from` could not hand these over (gone, unreadable). */
  missing: TaskRecord[]
  /** `to` paused before taking these. */
  refused: TaskRecord[]
}

export async function copyValues(host: CopyHost, from: WorkerHandle, to: WorkerHandle, tasks: TaskRecord[]): Promise<CopyOutcome> {
  const byKey = new Map(tasks.map((t) => [t.key, t]))
  const res = await to.rpc.request<AcquireResult>({ op: 'acquire', from: from.dataAddress, keys: tasks.map((t) => ({ key: t.key, nbytes: t.nbytes })) })
  host.onHeartbeat(to, res.metrics)
  const out: CopyOutcome = { copied: [], missing: [], refused: [] }
  for (const k of res.got) {
    const t = byKey.get(k)
    if (!t) continue
    // Let go of, or moved to `to` by someone else, while it travelled.
    if (t.state !== 'memory' || !holders(t).includes(from) || !to.alive) {
      if (t.worker !== to && !t.replicas?.has(to)) host.releaseCopy(to, k)
      continue
    }
    out.copied.push(t)
  }
  for (const k of res.missing) if (byKey.has(k)) out.missing.push(byKey.get(k)!)
  for (const k of res.refused) if (byKey.has(k)) out.refused.push(byKey.get(k)!)
  return out
}

/** Unmanaged: even with every managed value in memory spilled, the process would stay past `pause`. */
export function pausedByUnmanaged(m: WorkerMetrics, memoryLimit: number): boolean {
  return m.status === 'paused' && m.rss - m.memoryBytes > m.thresholds.pause * memoryLimit
}

/**
 * Bytes a worker can still take in: memory up to its pause threshold, plus
 * room on its spill disk where it can spill (its last heartbeat's figures;
 * none once it is at its maxSpill cap).
 */
export function roomOn(w: WorkerHandle, pause: number): number {
  const m = w.metrics
  if (!m) return 0
  const memory = Math.max(0, w.memoryLimit * (m.thresholds.pause ?? pause) - m.rss)
  // A filesystem that cannot say how much is free is not taken as full; a store at its maxSpill cap is.
  const spills = m.thresholds.target !== false || m.thresholds.spill !== false
  const disk = !spills || m.spillCapReached ? 0 : (m.spillFreeBytes ?? Infinity)
  return memory + disk
}
