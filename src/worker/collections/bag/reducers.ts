// The built-in bag reductions, as Dask's bag runs them: a step per
// partition that makes a partial, and an aggregate that combines partials
// at every level of the tree (and finishes at the last). Keys are equal by
// value (wire/key-equality.ts) and ordered by wire/order.ts; a partial
// holds the first key seen of each kind, as a Map (or Set) that travels.

import { columnTypesAccumulator, unifyColumnTypes, type ColumnTypes } from './parquet-schema'
import { ownTaskError } from '../../../base/errors'
import type { KeySpec, Reducer } from '../../../wire/bag'
import { KeyTable } from '../../../wire/key-equality'
import { keyOrder } from '../../../wire/order'
import { isThenable, keysOf, quiet, settled, stage, type Stage } from './async-stage'
import { eachItem, type Sink } from './items'

export type Fn = (...args: unknown[]) => unknown

/** Reducer functions, loaded: the same shape as Reducer with callables in place of StepFns. */
export interface Loaded {
  key?: (item: unknown) => unknown
  binop?: Fn
  combine?: Fn
  perPartition?: Fn
  aggregate?: Fn
}

export function keyOf(spec: KeySpec, fn: Fn | undefined): (item: unknown) => unknown {
  if ('field' in spec) {
    const f = spec.field
    return (item) => (item as any)?.[f]
  }
  return fn!
}

/** [count, mean, M2]: Chan et al.'s parallel variance, stable where sums of squares are not. */
type Moments = [number, number, number]

function combineMoments(parts: Moments[]): Moments {
  let [n, mean, m2] = [0, 0, 0]
  for (const [nb, meanb, m2b] of parts) {
    if (nb === 0) continue
    const total = n + nb
    const d = meanb - mean
    mean += (d * nb) / total
    m2 += m2b + (d * d * n * nb) / total
    n = total
  }
  return [n, mean, m2]
}

/** [has, value] so an empty partition has no min. */
type Extreme = [boolean, unknown]

function extreme(items: Iterable<unknown>, better: (a: any, b: any) => boolean): Extreme {
  let has = false
  let best: unknown
  for (const v of items) {
    if (!has || better(v, best)) best = v
    has = true
  }
  return [has, best]
}

const less = (a: any, b: any) => a < b
const more = (a: any, b: any) => a > b

/** The `k` largest; an async key's keys are awaited first (the first item's result decides). */
async function topkOf(items: unknown[], r: Extract<Reducer, { op: 'topk' }>, key: ((v: unknown) => unknown) | undefined): Promise<unknown[]> {
  return topk(items, r.k, key && (await keysOf(items, key, keyConcurrency(r.key))))
}

const keyConcurrency = (k: KeySpec | undefined): number => (k && 'fn' in k ? (k.fn.concurrency ?? 1) : 1)

function topk(items: Iterable<unknown>, k: number, key: ((v: unknown) => unknown) | undefined): unknown[] {
  const keyed = [...items].map((v) => [key ? key(v) : v, v] as [unknown, unknown])
  // Largest first; NaN, null and undefined are never larger than a value.
  const order = keyOrder({ descending: true }, 'topk key')
  keyed.sort((a, b) => order(a[0], b[0]))
  return keyed.slice(0, k).map(([, v]) => v)
}

/** Counts of a KeyTable, as the Map a partial travels as. */
function countInto(t: KeyTable<number>, k: unknown, n: number): void {
  const e = t.find(k)
  if (e) e.value += n
  else t.add(k, n)
}

/**
 * A sum of numbers is a number and a sum of bigints a bigint (an INT64
 * column read with int64: 'bigint' sums exactly); the two are never mixed,
 * since converting either way could round: the first item of the other
 * kind fails by name. An empty partition's 0 is no number, for that rule.
 */
function mixedNumbers(v: unknown, kind: string): Error {
  const other = typeof v === 'bigint' ? 'a bigint' : 'a number'
  return ownTaskError('ERR_SPILLWAY_MIXED_NUMBERS', `sum() met ${other}, ${typeof v === 'bigint' ? `${v}n` : String(v)}, among ${kind}s: map the items to one kind first (.map(Number) may round values past 2^53; .map(BigInt) keeps them exact)`, { value: String(v) })
}

function sumAccumulator(): Accumulator {
  let s: any = 0
  let kind: 'number' | 'bigint' | undefined
  const push = (v: unknown) => {
    const k = typeof v === 'bigint' ? 'bigint' : 'number'
    if (kind !== k) {
      if (kind) throw mixedNumbers(v, kind)
      kind = k
      if (k === 'bigint') s = 0n
    }
    s += v
  }
  return { push, result: () => s }
}

function addSums(a: any, b: any): unknown {
  if (typeof a === typeof b) return a + b
  if (a === 0) return b
  if (b === 0) return a
  throw mixedNumbers(b, typeof a)
}

/** A reduction's per-partition step as it takes items one by one (pushed, items.ts) and then gives its partial. */
export interface Accumulator {
  push: Sink
  result(): unknown
}

/** The accumulator of a built-in reduction; a custom one takes its items as an iterable and has none. */
export function accumulator(r: Reducer, f: Loaded): Accumulator | undefined {
  switch (r.op) {
    case 'count': {
      let n = 0
      return { push: () => void n++, result: () => n }
    }
    case 'sum':
      return sumAccumulator()
    case 'min':
    case 'max': {
      const better = r.op === 'min' ? less : more
      let has = false
      let best: unknown
      const push = (v: unknown) => {
        if (!has || better(v, best)) best = v
        has = true
      }
      return { push, result: (): Extreme => [has, best] }
    }
    case 'moments': {
      let [n, mean, m2] = [0, 0, 0]
      const push = (v: unknown) => {
        const x = Number(v)
        n++
        const d = x - mean
        mean += d / n
        m2 += d * (x - mean)
      }
      return { push, result: (): Moments => [n, mean, m2] }
    }
    case 'frequencies': {
      const t = new KeyTable<number>('frequencies item')
      return { push: (v) => countInto(t, v, 1), result: () => new Map(t) }
    }
    case 'distinct': {
      const t = new KeyTable<true>('distinct item')
      return { push: (v) => void (t.find(v) ?? t.add(v, true)), result: () => new Set(t.keys()) }
    }
    case 'topk': {
      const all: unknown[] = []
      return { push: (v) => void all.push(v), result: () => topkOf(all, r, f.key) }
    }
    case 'foldBy':
      return foldByAccumulator(r, f)
    case 'sample':
      return sampleAccumulator(f.key!, keyConcurrency(r.key))
    case 'custom':
      return undefined
    case 'parquetSchema':
      return columnTypesAccumulator(r.columns)
  }
}

/**
 * foldBy's per-partition table. Synchronous until the key function returns
 * a thenable: from that item on, keys go through an ordered stage (the
 * items' order kept, `concurrency` pending) and the table is filled as they
 * come; an async binop's accumulators are promises, settled at the end.
 */
function foldByAccumulator(r: Extract<Reducer, { op: 'foldBy' }>, f: Loaded): Accumulator {
  const t = new KeyTable<unknown>('foldBy key')
  const key = f.key!
  const binop = f.binop!
  const st: Folding = { pending: false }
  const add = (v: unknown, k: unknown) => {
    const e = t.find(k)
    if (e) e.value = fold(st, binop, e.value, v)
    else t.add(k, r.hasInitial ? fold(st, binop, r.initial, v) : v)
  }
  let keys: Stage | undefined
  const push = (v: unknown) => {
    if (keys) return keys.sink(v)
    const k = key(v)
    if (!isThenable(k)) return add(v, k)
    // This item's key is already asked for: its promise stands for it.
    let made = false
    const keyOnce = (x: unknown) => {
      if (made) return key(x)
      made = true
      return k
    }
    keys = stage(keyOnce, add, keyConcurrency(r.key))
    keys.sink(v)
  }
  const result = () => (st.pending ? settled(new Map(t)) : new Map(t))
  return { push, result: () => (keys ? keys.drained().then(result) : result()) }
}

/** Whether a table's binop or combine returned a promise: its values are settled before they travel. */
interface Folding {
  pending: boolean
}

/**
 * `binop(acc, v)`; an async binop's accumulator is a promise, and the next
 * item of its key waits for it, so each key's items fold in order while
 * keys fold side by side.
 */
function fold(st: Folding, binop: Fn, acc: unknown, v: unknown): unknown {
  const out = isThenable(acc) ? acc.then((a) => binop(a, v)) : binop(acc, v)
  if (!isThenable(out)) return out
  st.pending = true
  return quiet(out)
}

export function perPartition(r: Reducer, items: Iterable<unknown>, f: Loaded): unknown {
  const acc = accumulator(r, f)
  if (!acc) return f.perPartition!(items)
  eachItem(items, acc.push)
  return acc.result()
}

/** Keys kept per partition for range boundaries: enough that each output's range is even to a few percent. */
const SAMPLE = 256

/**
 * A reservoir sample of the partition's keys (Vitter's algorithm R), the
 * same for the same items on every run: items are kept, and only theirs
 * keyed at the end (awaited, if the key is async).
 */
function sampleAccumulator(key: (v: unknown) => unknown, concurrency: number): Accumulator {
  const kept: unknown[] = []
  let seen = 0
  let seed = 0x9e3779b9
  const push = (v: unknown) => {
    seen++
    if (kept.length < SAMPLE) kept.push(v)
    else {
      seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6b43a9b5) >>> 0
      const j = seed % seen
      if (j < SAMPLE) kept[j] = v
    }
  }
  return { push, result: async () => kept.map(await keysOf(kept, key, concurrency)) }
}

function boundaries(keys: unknown[], outputs: number, order: (a: unknown, b: unknown) => number): unknown[] {
  // Boxed: Array.prototype.sort puts undefined last without asking the comparator (nullsLast: false wants it first).
  const sorted = keys.map((k) => [k]).sort((a, b) => order(a[0], b[0])).map(([k]) => k)
  const out: unknown[] = []
  for (let i = 1; i < outputs; i++) if (sorted.length) out.push(sorted[Math.min(sorted.length - 1, Math.floor((i * sorted.length) / outputs))])
  return out
}

export function aggregate(r: Reducer, parts: unknown[], final: boolean, f: Loaded): unknown {
  switch (r.op) {
    case 'count':
      return (parts as number[]).reduce((a, b) => a + b, 0)
    case 'sum':
      return parts.reduce(addSums, 0)
    case 'min':
    case 'max': {
      const better = r.op === 'min' ? less : more
      const got = extreme((parts as Extreme[]).filter(([has]) => has).map(([, v]) => v), better)
      if (final && !got[0]) throw ownTaskError('ERR_SPILLWAY_EMPTY', `${r.op}() of an empty bag`, { op: r.op })
      return final ? got[1] : got
    }
    case 'moments':
      return combineMoments(parts as Moments[])
    case 'frequencies': {
      const t = new KeyTable<number>('frequencies item')
      for (const p of parts as Map<unknown, number>[]) for (const [k, n] of p) countInto(t, k, n)
      return final ? [...t] : new Map(t)
    }
    case 'distinct': {
      const t = new KeyTable<true>('distinct item')
      for (const p of parts as Set<unknown>[]) for (const v of p) if (!t.find(v)) t.add(v, true)
      return final ? t.keys() : new Set(t.keys())
    }
    case 'topk':
      return topkOf((parts as unknown[][]).flat(), r, f.key)
    case 'foldBy': {
      const combine = f.combine ?? f.binop!
      const st: Folding = { pending: false }
      const t = new KeyTable<unknown>('foldBy key')
      for (const p of parts as Map<unknown, unknown>[]) {
        for (const [k, v] of p) {
          const e = t.find(k)
          if (e) e.value = fold(st, combine, e.value, v)
          else t.add(k, r.hasCombineInitial ? fold(st, combine, r.combineInitial, v) : v)
        }
      }
      if (!st.pending) return final ? [...t] : new Map(t)
      return settled(new Map(t)).then((m) => (final ? [...m] : m))
    }
    case 'custom':
      return f.aggregate!(parts)
    case 'parquetSchema':
      return unifyColumnTypes(parts as ColumnTypes[])
    case 'sample': {
      const keys = (parts as unknown[][]).flat()
      return final ? boundaries(keys, r.outputs, keyOrder(r, 'sortBy key')) : keys
    }
  }
}
