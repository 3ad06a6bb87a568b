// The shuffle's two task kinds as the worker runs them: split (a
// partition's items, or its reduction's partial, cut by output and sent to
// the owners) and collect (an output's shards read back and made into
// items, groups, aggregates, a sorted run or join pairs).

import { ownTaskError } from '../base/errors'
import type { KeySpec } from '../wire/bag'
import { hashKey, type CollectSpec, type SplitMarker, type SplitSpec } from '../wire/bag'
import { runAggregate, runPartition, type FunctionLoader } from './bag-partition'
import { keyOf } from './bag-reducers'
import type { ShuffleService } from './shuffle'
import { boundedShards, checkJoinPairs, countPairs, GroupBound, outputBound, readAll, SORT_ENTRY_BYTES, type OutputBound } from './collect-bound'

async function keyFn(load: FunctionLoader, k: KeySpec): Promise<(item: unknown) => unknown> {
  if ('field' in k) return keyOf(k, undefined)
  const fn = await load.get(k.fn.fn)
  const args = k.fn.args
  return args.length ? (item) => fn(item, ...args) : (item) => fn(item)
}

/** Output of `key` among `boundaries` (sorted ascending): the first boundary above it. */
function rangeOf(key: unknown, boundaries: unknown[], descending: boolean): number {
  let lo = 0
  let hi = boundaries.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if ((boundaries[mid] as any) <= (key as any)) lo = mid + 1
    else hi = mid
  }
  return descending ? boundaries.length - lo : lo
}

export async function runSplit(load: FunctionLoader, service: ShuffleService, key: string, spec: SplitSpec, ...inputs: unknown[]): Promise<SplitMarker> {
  const owners = spec.owners
  if (!owners || owners.length !== spec.npartitions) throw ownTaskError('ERR_SPILLWAY_PROTOCOL', `shuffle ${spec.shuffle}: the run of ${key} came without the owners of its ${spec.npartitions} outputs`)
  const by = spec.by
  const boundaries = by.kind === 'range' ? (inputs.pop() as unknown[]) : undefined
  const out: unknown[][] = Array.from({ length: spec.npartitions }, () => [])
  const value = await runPartition(load, spec.partition, ...inputs)
  if (by.kind === 'hash-pairs') {
    // A Map's pairs by their keys; a Set's values (distinct) by themselves.
    if (value instanceof Set) for (const v of value) out[hashKey(v) % spec.npartitions].push(v)
    else for (const pair of value as Map<unknown, unknown>) out[hashKey(pair[0]) % spec.npartitions].push(pair)
  } else {
    const k = await keyFn(load, by.key)
    for (const item of value as unknown[]) {
      const p = by.kind === 'hash' ? hashKey(k(item)) % spec.npartitions : rangeOf(k(item), boundaries!, by.descending)
      out[p].push(item)
    }
  }
  return service.send(key, spec.shuffle, spec.input, spec.side, out, owners)
}

function compare(descending: boolean) {
  return (a: [unknown, unknown], b: [unknown, unknown]) => {
    const r = (a[0] as any) < (b[0] as any) ? -1 : (a[0] as any) > (b[0] as any) ? 1 : 0
    return descending ? -r : r
  }
}

export async function runCollect(load: FunctionLoader, service: ShuffleService, memoryLimit: number, spec: CollectSpec, ...markers: SplitMarker[]): Promise<unknown> {
  const then = spec.then
  const bound = outputBound(spec, memoryLimit)
  const shards = boundedShards(service.shards(spec.shuffle, spec.output, markers), bound)
  let result: unknown
  if (then.kind === 'items') result = (await readAll(shards)).flatMap((s) => s.items)
  else if (then.kind === 'aggregate') {
    const partial = (items: unknown[]) => (then.reduce.op === 'distinct' ? new Set(items) : new Map(items as [unknown, unknown][]))
    result = await runAggregate(load, { reduce: then.reduce, final: true }, ...(await readAll(shards)).map((s) => partial(s.items)))
  } else if (then.kind === 'groups') {
    const k = await keyFn(load, then.key)
    const groups = new Map<unknown, unknown[]>()
    const groupBound = new GroupBound(bound, then.maxGroupBytes)
    for await (const s of shards) {
      for (const item of s.items) {
        const g = k(item)
        const list = groups.get(g)
        if (list) list.push(item)
        else groups.set(g, [item])
      }
      groupBound.afterShard(groups, s.items.length)
    }
    groupBound.check(groups)
    result = [...groups]
  } else if (then.kind === 'sorted') {
    const k = await keyFn(load, then.key)
    const all = await readAll(shards)
    bound.need(bound.items * SORT_ENTRY_BYTES, `${bound.items} sort entries`)
    const keyed = all.flatMap((s) => s.items.map((v) => [k(v), v] as [unknown, unknown]))
    keyed.sort(compare(then.descending))
    result = keyed.map(([, v]) => v)
  } else {
    result = join(await readAll(shards), await keyFn(load, then.leftKey), await keyFn(load, then.rightKey), then.how, bound)
  }
  service.release(spec.shuffle, spec.output, markers)
  return result
}

function join(shards: { side: number; items: unknown[] }[], leftKey: (v: unknown) => unknown, rightKey: (v: unknown) => unknown, how: 'inner' | 'left' | 'outer', bound: OutputBound): [unknown, unknown][] {
  const right = new Map<unknown, unknown[]>()
  for (const s of shards) if (s.side === 1) for (const r of s.items) {
    const k = rightKey(r)
    const list = right.get(k)
    if (list) list.push(r)
    else right.set(k, [r])
  }
  checkJoinPairs(bound, countPairs(shards, (l) => right.get(leftKey(l)), right.values(), rightKey, how))
  const matched = new Set<unknown>()
  const out: [unknown, unknown][] = []
  for (const s of shards) if (s.side === 0) for (const l of s.items) {
    const k = leftKey(l)
    const rs = right.get(k)
    if (rs) {
      matched.add(k)
      for (const r of rs) out.push([l, r])
    } else if (how !== 'inner') out.push([l, undefined])
  }
  if (how === 'outer') for (const [k, rs] of right) if (!matched.has(k)) for (const r of rs) out.push([undefined, r])
  return out
}

