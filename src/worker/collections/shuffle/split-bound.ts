// The split side's memory bound. A split task holds its partition's items
// in the JS heap — for small records several times their serialized bytes —
// while the store holds the shards other workers pushed here; the store
// counts only the shards, and a partition computed in one synchronous run
// gives the memory monitor no turn to spill until it is done. So before a
// split runs, room is made (shards spilled) for the memory the largest
// split of the same shuffle took here, as estimated from its items
// (heap-estimate.ts); the first split of a shuffle on a worker runs before
// any shard has arrived, when there is room. Collects get the same: room
// for their output's estimated memory before its shards are read.

import { heapOf, heapOfItems } from './heap-estimate'

/** Slack over the estimate for what the collector has not given back yet (young objects copied, old ones not swept). */
export const GC_SLACK = 1.5

export class SplitMemory {
  /** Per shuffle: the largest estimated memory of one split's items here, and memory per encoded byte. */
  readonly #seen = new Map<string, { peak: number; perByte: number }>()

  /** Bytes a split of `shuffle` about to run should find room for. */
  forSplit(shuffle: string): number {
    return GC_SLACK * (this.#seen.get(shuffle)?.peak ?? 0)
  }

  /** Bytes an output of `shuffle` whose shards take `encodedBytes` should find room for. */
  forCollect(shuffle: string, encodedBytes: number): number {
    const perByte = this.#seen.get(shuffle)?.perByte
    return GC_SLACK * encodedBytes * (perByte ?? 1)
  }

  /** A split of `shuffle` ran here: its items took about `heap` bytes, `encodedBytes` once cut into shards. */
  record(shuffle: string, heap: number, encodedBytes: number): void {
    const s = this.#seen.get(shuffle) ?? { peak: 0, perByte: 0 }
    s.peak = Math.max(s.peak, heap)
    if (encodedBytes > 0) s.perByte = Math.max(s.perByte, heap / encodedBytes)
    this.#seen.set(shuffle, s)
  }

  drop(shuffle: string): void {
    this.#seen.delete(shuffle)
  }
}

/** Estimated memory of a split's value: its items, or a reduction's partial (a Map or Set). */
export function heapOfSplit(value: unknown): number {
  if (Array.isArray(value)) return heapOfItems(value)
  if (value instanceof Map || value instanceof Set) return heapOf(value)
  return 0
}
