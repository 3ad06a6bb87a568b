// The shuffle's two task kinds as the worker runs them: split (a
// partition's items, or its reduction's partial, cut by output and sent to
// the owners) and collect (an output's shards read back and made into
// items, groups, aggregates, a sorted run or join pairs).

import { ownTaskError } from '../../../base/errors'
import { hashKey, type CollectSpec, type SplitMarker, type SplitSpec } from '../../../wire/bag'
import { keyOrder } from '../../../wire/order'
import { keyFunction as keyFn, pushPartition, runAggregate, runPartition, type FunctionLoader } from '../bag/partition'
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
    let outputOf: (item: unknown) => number
    if (by.kind === 'hash') {
      const role = spec.side ? 'join rightKey' : 'key'
      const k = await keyFn(load, by.key, role)
      outputOf = (item) => hashKey(k(item), role) % np
    } else {
      const k = await keyFn(load, by.key, 'sortBy key')
      const order = keyOrder(by, 'sortBy key')
      outputOf = (item) => rangeOf(k(item), boundaries!, order)
    }
    const encoder = new SplitEncoder(np)
    await pushPartition(load, spec.partition, (item) => encoder.push(outputOf(item), item), ...inputs)
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
    const k = await keyFn(load, then.key, 'groupBy key')
    result = await collectGroups(shards, k, new GroupBound(bound, then.maxGroupBytes))
  } else if (then.kind === 'sorted') {
    const k = await keyFn(load, then.key, 'sortBy key')
    const all = await readAll(shards)
    bound.need(bound.items * SORT_ENTRY_BYTES, `${bound.items} sort entries`)
    const keyed = all.flatMap((s) => s.items.map((v) => [k(v), v] as [unknown, unknown]))
    const order = keyOrder(then, 'sortBy key')
    keyed.sort((a, b) => order(a[0], b[0]))
    result = keyed.map(([, v]) => v)
  } else {
    result = join(await readAll(shards), await keyFn(load, then.leftKey, 'join leftKey'), await keyFn(load, then.rightKey, 'join rightKey'), then.how, bound)
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

