// A run that could not get its inputs has them made again where their
// holder lost them. One whose push found a peer unreachable waits for that peer's removal
// before it goes again: rerun at once, it would only reach the dead peer
// again. A passing fault (the peer answers after all) gets a retry anyway.

import type { TaskRecord, WorkerHandle } from './state'
import { dropReplica, promoteReplica } from './replicas'

/** What this needs of the scheduler. */
export interface PeerGoneHost {
  readonly workers: Map<string, WorkerHandle>
  on(event: 'worker-removed', fn: (w: WorkerHandle) => void): unknown
  off(event: 'worker-removed', fn: (w: WorkerHandle) => void): unknown
}

/** What a run that could not get its inputs needs of the scheduler. */
export interface MissingInputsHost extends PeerGoneHost {
  releaseCopy(w: WorkerHandle, key: string): void
  readonly tasks: Map<string, TaskRecord>
  recompute(t: TaskRecord, w: WorkerHandle): void
  requeue(t: TaskRecord, front: boolean): void
  pump(): void
}

export const PEER_RETRY_MS = 2_000

/**
 * Calls `then` once the live worker whose data address is `peer` is removed
 * (or after PEER_RETRY_MS). Returns false, calling nothing, when no live
 * worker has that address.
 */
export function whenPeerGone(host: PeerGoneHost, peer: unknown, then: () => void): boolean {
  const gone = typeof peer === 'string' ? [...host.workers.values()].find((w) => w.alive && w.dataAddress === peer) : undefined
  if (!gone) return false
  let timer: NodeJS.Timeout | undefined
  const again = (w?: WorkerHandle) => {
    if (w && w !== gone) return
    host.off('worker-removed', again)
    clearTimeout(timer)
    then()
  }
  host.on('worker-removed', again)
  timer = setTimeout(again, PEER_RETRY_MS).unref()
  return true
}

/** A run could not get its inputs: make them again where their holder lost them, then run it. */
export function missingInputs(host: MissingInputsHost, t: TaskRecord, keys: string[], peer?: unknown): void {
  const ran = t.worker
  for (const k of keys) {
    const d = host.tasks.get(k)
    if (d?.state !== 'memory' || !d.worker?.alive) continue
    // The copy the run was sent to: a value moved since (retired, rebalanced) is not lost for that.
    const address = t.sent?.inputs?.[k]?.address
    const tried = address === undefined ? ran : [...host.workers.values()].find((w) => w.dataAddress === address)
    if (tried === d.worker) host.recompute(d, d.worker)
    else if (tried && d.replicas?.has(tried)) {
      dropReplica(d, tried)
      host.releaseCopy(tried, k)
    }
  }
  // A shuffle input whose push found its output's owner gone goes again
  // once that owner is removed, so the output has a new one.
  t.worker = undefined
  t.state = 'waiting'
  const again = () => {
    if (t.state !== 'waiting') return
    host.requeue(t, true)
    host.pump()
  }
  if (!whenPeerGone(host, peer, again)) host.requeue(t, true)
}

/** Drops a value its worker `w` cannot hand back and makes it again (a copy elsewhere takes over where there is one). */
export function recomputeValue(host: Pick<MissingInputsHost, 'releaseCopy' | 'requeue' | 'pump'>, t: TaskRecord, w: WorkerHandle): void {
  w.held.delete(t)
  w.heldBytes -= t.nbytes
  t.worker = undefined
  // Sent before the task can be placed again, so it never deletes a rerun on this worker.
  host.releaseCopy(w, t.key)
  if (promoteReplica(t)) return host.pump()
  for (const d of t.dependents) if (d.state === 'queued') d.state = 'waiting'
  host.requeue(t, true)
  host.pump()
}
