// A groupBy's output built in two passes over its shards' items: the first
// finds each item's group (one key lookup per item) and counts the groups'
// items, the second puts the items into arrays made at their groups' exact
// sizes. Pushed one by one, each group's array grew by copies to 17 slots
// or more where most groups hold a few items: most of a collect's garbage,
// and a third slower (bench/shuffle/hotpath.js).

import type { GroupBound, GroupSize } from './collect-bound'
import { KeyGroups } from './key-groups'

/** Arrays longer than this are built by appending: V8 makes a larger `new Array(n)` a dictionary. */
const PRESIZED = 16384

function* sizes(groups: readonly [unknown, number][], counts: readonly number[]): Generator<GroupSize> {
  for (let j = 0; j < groups.length; j++) yield [groups[j][0], { length: counts[j] }]
}

/** The groups of the items of `shards` by `key`, in the order their keys were first seen, checked against `bound` as they are read. */
export async function collectGroups(shards: AsyncIterable<{ items: unknown[] }>, keysFor: (items: unknown[]) => Promise<(item: unknown) => unknown>, bound: GroupBound): Promise<[unknown, unknown[]][]> {
  // Each key's group number, which is also its place in table.pairs.
  const table = new KeyGroups<number>('groupBy key')
  const counts: number[] = []
  const read: { items: unknown[]; group: Int32Array }[] = []
  for await (const s of shards) {
    const items = s.items
    // Awaited per shard where the key function is async (async-stage.ts keysOf); the function itself otherwise.
    const key = await keysFor(items)
    const group = new Int32Array(items.length)
    for (let i = 0; i < items.length; i++) {
      const k = key(items[i])
      let e = table.find(k)
      if (e === undefined) {
        e = table.add(k, counts.length)
        counts.push(0)
      }
      counts[e[1]]++
      group[i] = e[1]
    }
    read.push({ items, group })
    bound.afterShard(sizes(table.pairs, counts), items.length)
  }
  bound.check(sizes(table.pairs, counts))
  const lists = counts.map((n) => (n <= PRESIZED ? new Array<unknown>(n) : []))
  const filled = new Int32Array(counts.length)
  for (const { items, group } of read) {
    for (let i = 0; i < items.length; i++) {
      const j = group[i]
      lists[j][filled[j]++] = items[i]
    }
  }
  return table.pairs.map(([k], j) => [k, lists[j]])
}
