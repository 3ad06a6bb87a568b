// The shuffle's two task kinds as the worker runs them: split (a
// partition's items, or its reduction's partial, cut by output and sent to
// the owners) and collect (an output's shards read back and made into
// items, groups, aggregates, a sorted run or join pairs).

import { ownTaskError } from '../../../base/errors'
import { hashKey, type CollectSpec, type KeySpec, type SplitMarker, type SplitSpec } from '../../../wire/bag'
import { keyOrder } from '../../../wire/order'
import { isThenable, keysOf } from '../bag/async-stage'
import { keyConcurrency, keyFunction, pushPartition, runAggregate, runPartition, type FunctionLoader } from '../bag/partition'
import type { ShuffleService } from './service'
import { collectGroups } from './group-collect'
import { KeyGroups } from './key-groups'
import { heapOfSplit } from './split-bound'
import { SplitEncoder } from './split-stream'
import { boundedShards, checkJoinPairs, countPairs, GroupBound, outputBound, readAll, SORT_ENTRY_BYTES, type OutputBound } from './collect-bound'

/** Output of `key` among `boundaries` (sorted by `order`, the sort's own): the first boundary after it. */
function rangeOf(key: unknown, boundaries: unknown[], order: (a: unknown, b: unknown) => number): number {
  let lo = 0
  let hi = boundaries.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (order(boundaries[mid], key) <= 0) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** A key function for `items`, its keys awaited first where it is async (async-stage.ts keysOf). */
async function keyFn(load: FunctionLoader, k: KeySpec, items: unknown[]): Promise<(v: unknown) => unknown> {
  return keysOf(items, await keyFunction(load, k), keyConcurrency(k), load.task)
}

/** Each item's key for the streaming split: sync keys at once; from a first thenable key on, the items are kept and their keys awaited at the end (keysOf). */
class SplitKeys {
  #pending: unknown[] | undefined
  #first: unknown
  #decided = false

  constructor(
    private readonly key: (v: unknown) => unknown,
    private readonly place: (key: unknown, item: unknown) => void,
  ) {}

  push(item: unknown): void {
    if (this.#pending) return void this.#pending.push(item)
    const k = this.key(item)
    if (!this.#decided) {
      this.#decided = true
      if (isThenable(k)) {
        this.#first = k
        this.#pending = [item]
        return
      }
    }
    this.place(k, item)
  }

  async finish(spec: KeySpec, load: FunctionLoader): Promise<void> {
    const items = this.#pending
    if (!items) return
    const first = items[0]
    const key = await keysOf(items, (v) => (v === first ? this.#first : this.key(v)), keyConcurrency(spec), load.task)
    for (const item of items) this.place(key(item), item)
  }
}

export async function runSplit(load: FunctionLoader, service: ShuffleService, key: string, spec: SplitSpec, ...inputs: unknown[]): Promise<SplitMarker> {
  const owners = spec.owners
  if (!owners || owners.length !== spec.npartitions) throw ownTaskError('ERR_SPILLWAY_PROTOCOL', `shuffle ${spec.shuffle}: the run of ${key} came without the owners of its ${spec.npartitions} outputs`)
  const by = spec.by
  const boundaries = by.kind === 'range' ? (inputs.pop() as unknown[]) : undefined
  // Shards other splits pushed here are spilled first if this partition's items would not fit beside them.
  await service.roomForSplit(spec.shuffle)
  const np = spec.npartitions
  if (by.kind !== 'hash-pairs' && !spec.partition.reduce) {
    // Each item cut and encoded as it is made (split-stream.ts).
    let outputOf: (key: unknown) => number
    if (by.kind === 'hash') {
      const role = spec.side ? 'join rightKey' : 'key'
      outputOf = (k) => hashKey(k, role) % np
    } else {
      const order = keyOrder(by, 'sortBy key')
      outputOf = (k) => rangeOf(k, boundaries!, order)
    }
    const encoder = new SplitEncoder(np)
    const keys = new SplitKeys(await keyFunction(load, by.key), (k, item) => encoder.push(outputOf(k), item))
    await pushPartition(load, spec.partition, (item) => keys.push(item), ...inputs)
    await keys.finish(by.key, load)
    const marker = await service.sendParts(key, spec.shuffle, spec.input, spec.side, np, encoder.finish(), owners)
    service.splitMemory.record(spec.shuffle, encoder.heap, marker.bytes)
    return marker
  }
  const out: unknown[][] = Array.from({ length: np }, () => [])
  const value = await runPartition(load, spec.partition, ...inputs)
  const heap = heapOfSplit(value)
  // A Map's pairs by their keys; a Set's values (distinct) by themselves.
  const role = `${spec.partition.reduce?.op ?? 'shuffle'} key`
  if (value instanceof Set) for (const v of value) out[hashKey(v, role) % np].push(v)
  else for (const pair of value as Map<unknown, unknown>) out[hashKey(pair[0], role) % np].push(pair)
  const marker = await service.send(key, spec.shuffle, spec.input, spec.side, out, owners)
  service.splitMemory.record(spec.shuffle, heap, marker.bytes)
  return marker
}

export async function runCollect(load: FunctionLoader, service: ShuffleService, memoryLimit: number, spec: CollectSpec, ...markers: SplitMarker[]): Promise<unknown> {
  const then = spec.then
  const bound = outputBound(spec, memoryLimit)
  await service.roomForCollect(spec.shuffle, spec.output, markers)
  const shards = boundedShards(service.shards(spec.shuffle, spec.output, markers), bound)
  let result: unknown
  if (then.kind === 'items') result = (await readAll(shards)).flatMap((s) => s.items)
  else if (then.kind === 'aggregate') {
    const partial = (items: unknown[]) => (then.reduce.op === 'distinct' ? new Set(items) : new Map(items as [unknown, unknown][]))
    result = await runAggregate(load, { reduce: then.reduce, final: true }, ...(await readAll(shards)).map((s) => partial(s.items)))
  } else if (then.kind === 'groups') {
    const k = await keyFunction(load, then.key)
    result = await collectGroups(shards, (items) => keysOf(items, k, keyConcurrency(then.key), load.task), new GroupBound(bound, then.maxGroupBytes))
  } else if (then.kind === 'sorted') {
    const all = await readAll(shards)
    const k = await keyFn(load, then.key, all.flatMap((s) => s.items))
    bound.need(bound.items * SORT_ENTRY_BYTES, `${bound.items} sort entries`)
    const keyed = all.flatMap((s) => s.items.map((v) => [k(v), v] as [unknown, unknown]))
    const order = keyOrder(then, 'sortBy key')
    keyed.sort((a, b) => order(a[0], b[0]))
    result = keyed.map(([, v]) => v)
  } else {
    const all = await readAll(shards)
    const side = (n: number) => all.flatMap((s) => (s.side === n ? s.items : []))
    result = join(all, await keyFn(load, then.leftKey, side(0)), await keyFn(load, then.rightKey, side(1)), then.how, bound)
  }
  service.release(spec.shuffle, spec.output, markers)
  return result
}

function join(shards: { side: number; items: unknown[] }[], leftKey: (v: unknown) => unknown, rightKey: (v: unknown) => unknown, how: 'inner' | 'left' | 'outer', bound: OutputBound): [unknown, unknown][] {
  // Each right key's items, and whether a left item matched them.
  const right = new KeyGroups<{ items: unknown[]; matched: boolean }>('join key')
  for (const s of shards) if (s.side === 1) for (const r of s.items) {
    const k = rightKey(r)
    ;(right.find(k) ?? right.add(k, { items: [], matched: false }))[1].items.push(r)
  }
  // Each left item's match, looked up once for the count and the pairs both.
  type Match = { items: unknown[]; matched: boolean } | undefined
  const matches: Match[] = []
  for (const s of shards) if (s.side === 0) for (const l of s.items) matches.push(right.find(leftKey(l))?.[1])
  checkJoinPairs(bound, countPairs([{ side: 0, items: matches }], (m) => (m as Match)?.items, right.pairs.map(([, v]) => v.items), rightKey, how))
  const out: [unknown, unknown][] = []
  let i = 0
  for (const s of shards) if (s.side === 0) for (const l of s.items) {
    const rs = matches[i++]
    if (rs) {
      rs.matched = true
      for (const r of rs.items) out.push([l, r])
    } else if (how !== 'inner') out.push([l, undefined])
  }
  if (how === 'outer') for (const [, rs] of right.pairs) if (!rs.matched) for (const r of rs.items) out.push([undefined, r])
  return out
}

