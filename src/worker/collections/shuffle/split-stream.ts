// A split's items cut by output and encoded as they are made, a chunk of
// an output at a time: a partition's records die young, where a scavenge
// costs nothing for the dead, instead of all of them living until the
// partition ends to be copied, promoted and marked (the collector took a
// fifth of a groupBy worker's time). What waits to be sent is the encoded
// bytes, far less than the records' memory.

import { heapOfItems } from './heap-estimate'
import { splitParts } from './split-parts'

/** Items held before they are encoded, over all the outputs: young garbage a scavenge or two can take. */
export const PENDING_ITEMS = 32768
/** Items of one output encoded together at least: a shard's fixed costs stay small beside its items. */
export const MIN_CHUNK = 512

export class SplitEncoder {
  /** Estimated memory the items took, as a split holding them all would have needed. */
  heap = 0
  readonly #pending: unknown[][]
  readonly #parts: Buffer[][]
  readonly #chunk: number

  constructor(readonly npartitions: number) {
    this.#pending = Array.from({ length: npartitions }, () => [])
    this.#parts = Array.from({ length: npartitions }, () => [])
    this.#chunk = Math.max(MIN_CHUNK, Math.ceil(PENDING_ITEMS / npartitions))
  }

  push(output: number, item: unknown): void {
    const p = this.#pending[output]
    p.push(item)
    if (p.length >= this.#chunk) this.#flush(output)
  }

  #flush(output: number): void {
    const items = this.#pending[output]
    if (!items.length) return
    this.#pending[output] = []
    this.heap += heapOfItems(items)
    for (const b of splitParts(items)) this.#parts[output].push(b)
  }

  /** Every output's parts, in the order their items came (each let go once taken); encoding ends here, before any is sent. */
  finish(): Iterable<[number, Buffer[]]> {
    for (let p = 0; p < this.npartitions; p++) this.#flush(p)
    const parts = this.#parts
    return (function* () {
      for (let p = 0; p < parts.length; p++) {
        if (!parts[p].length) continue
        const these = parts[p]
        parts[p] = []
        yield [p, these] as [number, Buffer[]]
      }
    })()
  }
}
