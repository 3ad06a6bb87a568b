// Copies values from one worker to another (retirement, rebalance,
// replicate): the receiver fetches them from the holder's data server, as
// it would a task's inputs, so nothing passes through the scheduler and a
// spilled value travels as its compressed frame. A copy that lands is a
// replica at once (replicas.ts), so whatever happens next (the sender
// lost, the value released, the receiver lost) is taken care of by the
// rules every replica follows; a caller that moves the value makes the
// replica its holder only while it still is one. A copy that lands after
// its key was let go of, or submitted anew, is freed again at once.

import type { AcquireResult, WorkerMetrics } from '../wire/protocol'
import type { TaskRecord, WorkerHandle } from './state'
import { addReplica, holders, type ReplicaHost } from './replicas'

/** What this needs of the scheduler. */
export interface CopyHost extends ReplicaHost {
  readonly tasks: Map<string, TaskRecord>
  onHeartbeat(w: WorkerHandle, m: WorkerMetrics): void
  /** Sends the releases waiting for `w` now, so none of them reaches it after a copy of the same key. */
  flushReleases(w: WorkerHandle): void
}

export interface CopyOutcome {
  /** Now on `to` as well, still a live value. */
  copied: TaskRecord[]
  /** `from` could not hand these over (gone, unreadable). */
  missing: TaskRecord[]
  /** `to` did not take these: it paused, could not reach `from`, or its store failed (`error`). */
  refused: TaskRecord[]
  error?: string
}

export async function copyValues(host: CopyHost, from: WorkerHandle, to: WorkerHandle, tasks: TaskRecord[]): Promise<CopyOutcome> {
  const byKey = new Map(tasks.map((t) => [t.key, t]))
  host.flushReleases(to)
  const res = await to.rpc.request<AcquireResult>({ op: 'acquire', from: from.dataAddress, keys: tasks.map((t) => ({ key: t.key, nbytes: t.nbytes })) })
  host.onHeartbeat(to, res.metrics)
  const out: CopyOutcome = { copied: [], missing: [], refused: [], error: res.error }
  for (const k of res.got) {
    const t = byKey.get(k)
    if (!t) continue
    const current = host.tasks.get(k)
    // Let go of (or submitted anew, or lost its sender) while it travelled; or `to` is on its way out.
    if (current !== t || t.state !== 'memory' || !holders(t).includes(from) || !to.alive || to.closing) {
      if (current?.worker !== to && !current?.replicas?.has(to)) host.releaseCopy(to, k)
      continue
    }
    addReplica(t, to)
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
