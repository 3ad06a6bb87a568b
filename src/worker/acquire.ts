// Values copied in from a peer (retirement, rebalance, replicate): fetched
// over the data socket as the peer holds them (a spilled value as its
// compressed frame) and stored here, where they count against this worker's
// limits and spill as its own do. A batch is at most the transfer cap, and a
// worker that pauses stops taking more: what it holds is then over its limit
// already, and the scheduler sends the rest elsewhere.

import type { DataClient } from '../comm/data-client'
import type { AcquireResult, WorkerStatus } from '../wire/protocol'
import type { WorkerStore } from './store'

export interface AcquireHost {
  store: WorkerStore
  client: DataClient
  /** Bytes of incoming transfers in flight at once. */
  transferLimit: number
  status(): WorkerStatus
  /** Checks memory now (spills to target, pauses past `pause`). */
  check(): void
}

export async function acquire(host: AcquireHost, from: string, keys: Array<{ key: string; nbytes: number }>): Promise<Omit<AcquireResult, 'metrics'>> {
  const got: string[] = []
  const missing: string[] = []
  let i = 0
  while (i < keys.length) {
    host.check()
    if (host.status() === 'paused') break
    const batch: string[] = []
    let bytes = 0
    // One value larger than the cap still comes, alone.
    while (i < keys.length && (batch.length === 0 || bytes + keys[i].nbytes <= host.transferLimit)) {
      const { key, nbytes } = keys[i++]
      if (host.store.has(key)) got.push(key)
      else {
        batch.push(key)
        bytes += nbytes
      }
    }
    if (!batch.length) continue
    let values: Map<string, Buffer | undefined>
    try {
      values = await host.client.fetch(from, batch)
    } catch {
      // The peer is gone or unreachable: nothing more can come from it.
      missing.push(...batch, ...keys.slice(i).map((k) => k.key))
      i = keys.length
      break
    }
    for (const key of batch) {
      const v = values.get(key)
      if (!v) {
        missing.push(key)
        continue
      }
      await host.store.set(key, v)
      got.push(key)
    }
  }
  return { got, missing, refused: keys.slice(i).map((k) => k.key) }
}
