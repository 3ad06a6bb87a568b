// The shuffle's two task kinds as the worker runs them: split (a
// partition's items, or its reduction's partial, cut by output and sent to
// the owners) and collect (an output's shards read back and made into
// items, groups, aggregates, a sorted run or join pairs).

import { ownTaskError } from '../../../base/errors'
import { hashKey, type CollectSpec, type KeySpec, type SplitMarker, type SplitSpec } from '../../../wire/bag'
import { KeyTable, showKey } from '../../../wire/key-equality'
import { keyOrder } from '../../../wire/order'
import { keysOf } from '../bag/async-stage'
import { keyConcurrency, keyFunction, runAggregate, runPartition, type FunctionLoader } from '../bag/partition'
import type { ShuffleService } from './service'
import { heapOfSplit } from './split-bound'
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

export async function runSplit(load: FunctionLoader, service: ShuffleService, key: string, spec: SplitSpec, ...inputs: unknown[]): Promise<SplitMarker> {
  const owners = spec.owners
  if (!owners || owners.length !== spec.npartitions) throw ownTaskError('ERR_SPILLWAY_PROTOCOL', `shuffle ${spec.shuffle}: the run of ${key} came without the owners of its ${spec.npartitions} outputs`)
  const by = spec.by
  const boundaries = by.kind === 'range' ? (inputs.pop() as unknown[]) : undefined
  const out: unknown[][] = Array.from({ length: spec.npartitions }, () => [])
  // Shards other splits pushed here are spilled first if this partition's items would not fit beside them.
  await service.roomForSplit(spec.shuffle)
  const value = await runPartition(load, spec.partition, ...inputs)
  const heap = heapOfSplit(value)
  if (by.kind === 'hash-pairs') {
    // A Map's pairs by their keys; a Set's values (distinct) by themselves.
    const role = `${spec.partition.reduce?.op ?? 'shuffle'} key`
    if (value instanceof Set) for (const v of value) out[hashKey(v, role) % spec.npartitions].push(v)
    else for (const pair of value as Map<unknown, unknown>) out[hashKey(pair[0], role) % spec.npartitions].push(pair)
  } else if (by.kind === 'hash') {
    const role = spec.side ? 'join rightKey' : 'key'
    const k = await keyFn(load, by.key, value as unknown[])
    for (const item of value as unknown[]) out[hashKey(k(item), role) % spec.npartitions].push(item)
  } else {
    const k = await keyFn(load, by.key, value as unknown[])
    const order = keyOrder(by, 'sortBy key')
    for (const item of value as unknown[]) out[rangeOf(k(item), boundaries!, order)].push(item)
  }
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
    const groups = new KeyTable<unknown[]>('groupBy key')
    const groupBound = new GroupBound(bound, then.maxGroupBytes)
    for await (const s of shards) {
      const key = await keysOf(s.items, k, keyConcurrency(then.key), load.task)
      for (const item of s.items) {
        const g = key(item)
        ;(groups.find(g) ?? groups.add(g, [])).value.push(item)
      }
      groupBound.afterShard(groups, s.items.length)
    }
    groupBound.check(groups)
    result = [...groups]
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
  const right = new KeyTable<{ items: unknown[]; matched: boolean }>('join key')
  for (const s of shards) if (s.side === 1) for (const r of s.items) {
    const k = rightKey(r)
    ;(right.find(k) ?? right.add(k, { items: [], matched: false })).value.items.push(r)
  }
  checkJoinPairs(bound, countPairs(shards, (l) => right.get(leftKey(l))?.items, [...right].map(([, v]) => v.items), rightKey, how))
  const out: [unknown, unknown][] = []
  for (const s of shards) if (s.side === 0) for (const l of s.items) {
    const rs = right.get(leftKey(l))
    if (rs) {
      rs.matched = true
      for (const r of rs.items) out.push([l, r])
    } else if (how !== 'inner') out.push([l, undefined])
  }
  if (how === 'outer') for (const [, rs] of right) if (!rs.matched) for (const r of rs.items) out.push([undefined, r])
  return out
}

