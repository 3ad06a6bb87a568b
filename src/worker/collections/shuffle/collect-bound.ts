// The memory bound of a shuffle's output task, checked as its shards are
// read back rather than once they all are: the items of one output, one
// group, or one join key's pairs that cannot fit a worker fail by name
// before they are built, instead of killing worker after worker. Sizes are
// the items' estimated memory (heap-estimate.ts), which for many small
// records is several times their serialized bytes.

import { ownTaskError } from '../../../base/errors'
import type { CollectSpec } from '../../../wire/bag'
import { heapOfItems } from './heap-estimate'

/** Share of a worker's limit one output's items (and what is built of them) may take. */
export const OUTPUT_SHARE = 0.6
/** Memory of one join pair ([left, right] and its slot), beyond the items it refers to. */
export const PAIR_BYTES = 72
/** Memory of one [key, item] entry a sort builds, beyond the item. */
export const SORT_ENTRY_BYTES = 80

const mib = (n: number) => (n >= 2 ** 20 ? `${(n / 2 ** 20).toFixed(0)} MiB` : `${Math.round(n)} bytes`)
const showKey = (k: unknown) => {
  try {
    return (JSON.stringify(k) ?? String(k)).slice(0, 200)
  } catch {
    return String(k).slice(0, 200)
  }
}

export interface OutputInfo {
  shuffle: string
  output: number
  npartitions: number
  /** What the output builds: 'a groupBy', 'a join', 'a sortBy', … */
  what: string
  /** What is bounded, where it is no shuffle's output (a broadcast join's partition). */
  label?: string
}

export class OutputBound {
  items = 0
  bytes = 0
  heap = 0
  shards = 0
  readonly budget: number

  constructor(
    readonly info: OutputInfo,
    readonly memoryLimit: number,
  ) {
    this.budget = OUTPUT_SHARE * memoryLimit
  }

  /** Memory of an item, on average so far. */
  get heapPerItem(): number {
    return this.items ? this.heap / this.items : 0
  }

  get bytesPerItem(): number {
    return this.items ? this.bytes / this.items : 0
  }

  /** One shard read back: an output that no longer fits fails now, before the next is read. */
  add(items: readonly unknown[], bytes: number): void {
    this.items += items.length
    this.bytes += bytes
    this.heap += heapOfItems(items)
    this.shards++
    this.need(0, 'its items')
  }

  /** `extra` bytes more are about to be built of the items (pairs, sort entries): fails if they would not fit. */
  need(extra: number, what: string): void {
    if (this.heap + extra <= this.budget) return
    const { shuffle, output, npartitions, label } = this.info
    const read = label ? `${this.items} items` : `${this.items} items read so far (${this.shards} shards, ${mib(this.bytes)} serialized)`
    throw ownTaskError(
      'ERR_SPILLWAY_TOO_LARGE',
      `${label ?? `output ${output} of ${npartitions} of shuffle ${shuffle}`} (${this.info.what}) would hold ${what}: ${read}, about ${mib(this.heap + extra)} in memory, more than ${Math.round(OUTPUT_SHARE * 100)}% of a worker's ${mib(this.memoryLimit)} limit: use more npartitions (total bytes / npartitions well under the worker's limit), or combine before the shuffle (foldBy, frequencies)`,
      { shuffle, output, items: this.items, bytes: this.bytes, memoryBytes: Math.round(this.heap + extra), memoryLimit: this.memoryLimit },
    )
  }
}

/** A group's key and its items (or only how many there are). */
export type GroupSize = readonly [unknown, { readonly length: number }]

/**
 * Groups as they are built: one past the bound fails by name. Scanned each
 * time the output has grown by an eighth of the bound (no group can pass it
 * unseen by more than that), and once at the end.
 */
export class GroupBound {
  #sinceScan = 0
  readonly bound: number
  readonly bySerialized: boolean

  constructor(
    private readonly out: OutputBound,
    private readonly maxGroupBytes: number | undefined,
  ) {
    // maxGroupBytes is the user's figure, in serialized bytes; the default, half a worker, is memory.
    this.bySerialized = maxGroupBytes !== undefined
    this.bound = maxGroupBytes ?? out.memoryLimit / 2
  }

  afterShard(groups: Iterable<GroupSize>, shardItems: number): void {
    this.#sinceScan += shardItems * (this.bySerialized ? this.out.bytesPerItem : this.out.heapPerItem)
    if (this.#sinceScan < this.bound / 8) return
    this.#sinceScan = 0
    this.check(groups, true)
  }

  check(groups: Iterable<GroupSize>, partial = false): void {
    const out = this.out
    if (!out.items) return
    for (const [k, list] of groups) {
      const serialized = list.length * out.bytesPerItem
      const memory = list.length * out.heapPerItem
      if ((this.bySerialized ? serialized : memory) <= this.bound) continue
      const limit = this.bySerialized ? `maxGroupBytes (${this.maxGroupBytes} bytes)` : `half of a worker's ${mib(out.memoryLimit)} limit`
      throw ownTaskError(
        'ERR_SPILLWAY_GROUP_TOO_LARGE',
        `group ${showKey(k)} holds ${partial ? 'at least ' : ''}${list.length} items, about ${mib(serialized)} serialized and ${mib(memory)} in memory, more than ${limit}: use foldBy (which never builds groups) or a key with more values`,
        { key: k, items: list.length, bytes: Math.round(serialized), memoryBytes: Math.round(memory), memoryLimit: out.memoryLimit },
      )
    }
  }
}

/**
 * The pairs a join would build, counted before any is: the hottest key (its
 * left count × right count) is named when it is what does not fit.
 */
export function checkJoinPairs(out: OutputBound, { pairs, hottest }: PairCount): void {
  const extra = pairs * PAIR_BYTES
  if (out.heap + extra <= out.budget) return
  if (hottest && hottest.left * hottest.right * 2 >= pairs) {
    const n = hottest.left * hottest.right
    throw ownTaskError(
      'ERR_SPILLWAY_TOO_LARGE',
      `join key ${showKey(hottest.key)} is on ${hottest.left} left and ${hottest.right} right items: ${n} pairs, about ${mib(n * PAIR_BYTES)} in memory beyond the items' ${mib(out.heap)}, more than ${Math.round(OUTPUT_SHARE * 100)}% of a worker's ${mib(out.memoryLimit)} limit: filter or aggregate one side by that key first, or salt it on one side and repeat the other side's items for each salt`,
      { key: hottest.key, left: hottest.left, right: hottest.right, pairs: n, memoryBytes: Math.round(out.heap + extra), memoryLimit: out.memoryLimit },
    )
  }
  out.need(extra, `${pairs} join pairs`)
}

export interface PairCount {
  pairs: number
  hottest: { key: unknown; left: number; right: number } | undefined
}

/**
 * The pairs a join of `shards` makes, and its hottest key, without making
 * them. `matchOf` is the right items a left item pairs with; right lists
 * are told apart by identity, so this holds whatever makes keys equal.
 */
export function countPairs(shards: readonly { side: number; items: readonly unknown[] }[], matchOf: (left: unknown) => unknown[] | undefined, rightLists: Iterable<unknown[]>, rightKey: (v: unknown) => unknown, how: 'inner' | 'left' | 'outer'): PairCount {
  const lefts = new Map<unknown[], number>()
  let pairs = 0
  for (const s of shards) {
    if (s.side !== 0) continue
    for (const l of s.items) {
      const rs = matchOf(l)
      if (rs) {
        pairs += rs.length
        lefts.set(rs, (lefts.get(rs) ?? 0) + 1)
      } else if (how !== 'inner') pairs++
    }
  }
  let hottest: PairCount['hottest']
  for (const [rs, left] of lefts) if (!hottest || left * rs.length > hottest.left * hottest.right) hottest = { key: rs[0], left, right: rs.length }
  if (hottest) hottest.key = rightKey(hottest.key)
  if (how === 'outer') for (const rs of rightLists) if (!lefts.has(rs)) pairs += rs.length
  return { pairs, hottest }
}

const KIND_WORDS: Record<CollectSpec['then']['kind'], string> = { items: 'a repartition', groups: 'a groupBy', aggregate: 'a reduction', sorted: 'a sortBy', join: 'a join' }

export function outputBound(spec: CollectSpec, memoryLimit: number): OutputBound {
  return new OutputBound({ shuffle: spec.shuffle, output: spec.output, npartitions: spec.npartitions, what: KIND_WORDS[spec.then.kind] }, memoryLimit)
}

type Shard = { side: number; items: unknown[]; bytes: number }

/** The shards as they are read, each counted against the output's bound before the next is read. */
export async function* boundedShards(shards: AsyncIterable<Shard>, bound: OutputBound): AsyncGenerator<Shard> {
  for await (const s of shards) {
    bound.add(s.items, s.bytes)
    yield s
  }
}

export async function readAll(shards: AsyncIterable<Shard>): Promise<Shard[]> {
  const out: Shard[] = []
  for await (const s of shards) out.push(s)
  return out
}
