// A run whose push found a peer unreachable waits for that peer's removal
// before it goes again: rerun at once, it would only reach the dead peer
// again. A passing fault (the peer answers after all) gets a retry anyway.

import type { WorkerHandle } from './state'

/** What this needs of the scheduler. */
export interface PeerGoneHost {
  readonly workers: Map<string, WorkerHandle>
  on(event: 'worker-removed', fn: (w: WorkerHandle) => void): unknown
  off(event: 'worker-removed', fn: (w: WorkerHandle) => void): unknown
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
