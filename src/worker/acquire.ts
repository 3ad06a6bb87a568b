// Values copied in from a peer (retirement, rebalance, replicate): fetched
// over the data socket as the peer holds them, and stored here (a value the
// peer had spilled goes onto this worker's spill disk as the compressed
// frame it came as, taking no memory), where they count against this worker's
// limits and spill as its own do. Batches of at most the transfer cap; the
// next batch is fetched while the last one is stored, so the socket and the
// store work at once. A worker that pauses stops taking more: what it holds
// is then over its limit already, and the scheduler sends the rest elsewhere.

import type { DataClient } from '../comm/data-client'
import type { AcquireResult, WorkerStatus } from '../wire/protocol'
import type { WorkerStore } from './store'
import { decompress } from '../native/codecs'
import { UNREADABLE_CODES } from '../wire/protocol'

export interface AcquireHost {
  store: WorkerStore
  client: DataClient
  /** Bytes of incoming transfers in flight at once. */
  transferLimit: number
  status(): WorkerStatus
  /** Checks memory now (spills to target, pauses past `pause`). */
  check(): void
  /** False with spill off (memoryTarget and memorySpill false): a frame is decoded into memory, never written. */
  spills(): boolean
}

type Fetched = Map<string, { frame: boolean; data: Buffer } | undefined> | { error: string }

export async function acquire(host: AcquireHost, from: string, keys: Array<{ key: string; nbytes: number }>): Promise<Omit<AcquireResult, 'metrics'>> {
  const got: string[] = []
  const missing: string[] = []
  const batches: string[][] = []
  let bytes = 0
  for (const { key, nbytes } of keys) {
    if (host.store.has(key)) {
      got.push(key)
      continue
    }
    // One value larger than the cap still comes, alone.
    if (!batches.length || (bytes + nbytes > host.transferLimit && batches[batches.length - 1].length)) {
      batches.push([])
      bytes = 0
    }
    batches[batches.length - 1].push(key)
    bytes += nbytes
  }
  const fetch = (batch: string[]): Promise<Fetched> => host.client.fetchFrames(from, batch).catch((e) => ({ error: String(e?.message ?? e) }))
  let next = batches.length ? fetch(batches[0]) : undefined
  let i = 0
  for (; i < batches.length; i++) {
    const values = await next!
    if (!(values instanceof Map)) {
      // The peer could not be reached: its values are not lost for that (it
      // may be alive and well); the scheduler decides what to do with them.
      return { got, missing, refused: batches.slice(i).flat(), error: values.error }
    }
    host.check()
    next = i + 1 < batches.length && host.status() !== 'paused' ? fetch(batches[i + 1]) : undefined
    for (let j = 0; j < batches[i].length; j++) {
      const key = batches[i][j]
      const v = values.get(key)
      if (!v) {
        missing.push(key)
        continue
      }
      try {
        if (!v.frame) await host.store.set(key, v.data)
        else if (host.spills()) await host.store.setFrame(key, v.data)
        else await host.store.set(key, await decompress(v.data))
        got.push(key)
      } catch (e: any) {
        // A frame that fails its checks is the sender's copy gone bad: that
        // value is missing. Anything else is this store failing: stop here,
        // and say what was taken in so far.
        if (UNREADABLE_CODES.has(e?.code)) {
          missing.push(key)
          continue
        }
        void next?.catch(() => {})
        return { got, missing, refused: [...batches[i].slice(j), ...batches.slice(i + 1).flat()], error: `${e?.code ?? 'Error'}: ${e?.message ?? e}` }
      }
    }
    values.clear()
    if (!next) break
  }
  return { got, missing, refused: batches.slice(i + 1).flat() }
}
