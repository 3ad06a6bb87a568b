// Shards batched per destination: an input task's shards for every output
// one worker owns travel together, in messages of a few MiB, as Dask's P2P
// batches them per worker — not one message per (input, output) pair. A
// message is a list of [shard key, length] and the shards' bytes back to
// back; the receiver stores each shard under its key as it came, never
// decoding it, so a repeated shard is still known by its key and dropped.

import { SpillwayError } from '../../../base/errors'
import { SHARD_KEY } from '../../../wire/bag'

/** Bytes of shards gathered for one owner before they go as one message. */
export const BATCH_BYTES = 4 * 2 ** 20
/** Shards in one message at most: its header is JSON, parsed whole. */
export const BATCH_SHARDS = 4096

export interface ShardBatch {
  /** [shard key, bytes], in the order of `data`. */
  shards: [string, number][]
  data: Buffer[]
  bytes: number
}

/** Shards gathered per owner, not yet sent. */
export class OwnerBatches {
  readonly #pending = new Map<string, ShardBatch>()
  pendingBytes = 0

  /** Adds a shard for `owner`; true once that owner's batch is full. */
  add(owner: string, key: string, blob: Buffer): boolean {
    let b = this.#pending.get(owner)
    if (!b) this.#pending.set(owner, (b = { shards: [], data: [], bytes: 0 }))
    b.shards.push([key, blob.length])
    b.data.push(blob)
    b.bytes += blob.length
    this.pendingBytes += blob.length
    return b.bytes >= BATCH_BYTES || b.shards.length >= BATCH_SHARDS
  }

  take(owner: string): ShardBatch | undefined {
    const b = this.#pending.get(owner)
    if (!b) return undefined
    this.#pending.delete(owner)
    this.pendingBytes -= b.bytes
    return b
  }

  /** The owner with the most bytes waiting, if any. */
  largest(): { owner: string; bytes: number } | undefined {
    let best: { owner: string; bytes: number } | undefined
    for (const [owner, b] of this.#pending) if (!best || b.bytes > best.bytes) best = { owner, bytes: b.bytes }
    return best
  }

  owners(): string[] {
    return [...this.#pending.keys()]
  }
}

/**
 * A peer's batch checked whole before any shard of it is kept: every key a
 * shuffle shard, every length a whole number, the lengths adding up to the
 * payload. Nothing in it is decoded; the shards are views of the payload.
 */
export function parseBatch(shards: unknown, payload: Buffer): [string, Buffer][] {
  const bad = (why: string) => new SpillwayError('ERR_SPILLWAY_PROTOCOL', `a peer pushed a batch of shards that ${why}`)
  if (!Array.isArray(shards) || shards.length > BATCH_SHARDS) throw bad(`is not a list of at most ${BATCH_SHARDS} [key, length] pairs`)
  const out: [string, Buffer][] = []
  let at = 0
  for (const entry of shards) {
    if (!Array.isArray(entry) || entry.length !== 2) throw bad('holds an entry that is not a [key, length] pair')
    const [key, len] = entry as [unknown, unknown]
    if (typeof key !== 'string' || !SHARD_KEY.test(key)) throw bad(`names ${JSON.stringify(String(key).slice(0, 80))}, which is not a shuffle shard`)
    if (!Number.isSafeInteger(len) || (len as number) < 0 || at + (len as number) > payload.length) throw bad(`gives ${key} a length of ${String(len)}, past its ${payload.length} bytes`)
    out.push([key, payload.subarray(at, at + (len as number))])
    at += len as number
  }
  if (at !== payload.length) throw bad(`lists ${at} bytes of shards in a payload of ${payload.length}`)
  return out
}
