// A partition's steps pushed item by item into its reduction (items.ts)
// give what plain JavaScript gives on the same items: random pipelines of
// every per-item step, around the steps that take the items whole
// (mapPartitions, a custom reduction), from arrays and text blocks.

import test from 'ava'
import { columnTypesAccumulator, unifyColumnTypes } from '../src/worker/collections/bag/parquet-schema'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bag } from 'spillway'
import type { FnDesc } from '../src/wire/functions'
import type { PartitionSpec, Reducer, Step, StepFn } from '../src/wire/bag'
import { runPartition, type FunctionLoader } from '../src/worker/collections/bag/partition'

const dir = mkdtempSync(join(tmpdir(), 'spillway-bag-steps-'))
test.after.always(() => rmSync(dir, { recursive: true, force: true }))

/** mulberry32: the same pipelines on every run. */
function rng(seed: number) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

type F = (...a: any[]) => any
/** The functions a pipeline may use, each on any item (numbers, strings, pairs, records). */
const FNS: Record<string, F> = {
  size: (v) => (typeof v === 'string' ? v.length : Array.isArray(v) ? v.length : typeof v === 'number' ? v % 7 : 3),
  asRecord: (v) => ({ n: typeof v === 'number' ? v : String(v).length, s: String(v) }),
  odd: (v) => (typeof v === 'number' ? v % 2 === 1 : String(v).length % 2 === 1),
  twice: (v) => [v, v],
  none: () => [],
  firstHalf: (items: Iterable<unknown>) => {
    const all = [...items]
    return all.slice(0, Math.ceil(all.length / 2))
  },
  reversed: (items: Iterable<unknown>) => [...items].reverse(),
  mod3: (v) => (typeof v === 'number' ? v % 3 : String(v).length % 3),
  plus: (acc: number, v: unknown) => acc + (typeof v === 'number' ? v : String(v).length),
  add: (a: number, b: number) => a + b,
  countAll: (items: Iterable<unknown>) => [...items].length,
  total: (parts: number[]) => parts.reduce((a, b) => a + b, 0),
  withExtra: (v: unknown, k: number) => (typeof v === 'number' ? v * k : v),
}
const fnDesc = (name: string): FnDesc => ({ kind: 'source', id: name, source: '', label: name })
const call = (name: string, args: unknown[] = []): StepFn => ({ fn: fnDesc(name), args })
const loader: FunctionLoader = { get: async (d) => FNS[d.id] as never }

/** Plain JavaScript's answer for a step. */
function plainStep(items: unknown[], s: Step, small: unknown[]): unknown[] {
  const f = 'call' in s ? (v: unknown) => FNS[s.call.fn.id](v, ...s.call.args) : undefined
  switch (s.op) {
    case 'map':
      return items.map((v) => f!(v))
    case 'filter':
      return items.filter((v) => f!(v))
    case 'flatMap':
      return items.flatMap((v) => f!(v))
    case 'pluck':
      return items.map((v) => (v as any)?.[s.field])
    case 'mapPartitions':
      return [...(f!(items) as unknown[])]
    case 'join-broadcast':
      return items.flatMap((l) => {
        const rs = small.filter((r) => FNS.mod3(r) === FNS.mod3(l))
        return rs.length ? rs.map((r) => [l, r]) : s.how === 'left' ? [[l, undefined]] : []
      })
    default:
      throw new Error(s.op)
  }
}

function randomStep(r: () => number): Step {
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]
  switch (pick(['map', 'map', 'filter', 'flatMap', 'pluck', 'mapPartitions', 'join'])) {
    case 'map':
      return pick([{ op: 'map', call: call('size') }, { op: 'map', call: call('asRecord') }, { op: 'map', call: call('withExtra', [3]) }] as Step[])
    case 'filter':
      return { op: 'filter', call: call('odd') }
    case 'flatMap':
      return { op: 'flatMap', call: call(pick(['twice', 'none'])) }
    case 'pluck':
      return { op: 'pluck', field: pick(['n', 's', 0]) }
    case 'mapPartitions':
      return { op: 'mapPartitions', call: call(pick(['firstHalf', 'reversed'])) }
    default:
      return { op: 'join-broadcast', input: 0, how: pick(['inner', 'left'] as const), leftKey: { fn: call('mod3') }, rightKey: { fn: call('mod3') } }
  }
}

const REDUCERS: [Reducer | undefined, (items: unknown[]) => unknown][] = [
  [undefined, (items) => items],
  [{ op: 'count' }, (items) => items.length],
  [
    { op: 'frequencies' },
    (items) => {
      // Keys equal by value, as wire/key-equality.ts has them: the first of each kept.
      const byText = new Map<string, [unknown, number]>()
      for (const v of items) {
        const e = byText.get(JSON.stringify(v) ?? 'undefined')
        if (e) e[1]++
        else byText.set(JSON.stringify(v) ?? 'undefined', [v, 1])
      }
      return new Map(byText.values())
    },
  ],
  [
    { op: 'foldBy', key: { fn: call('mod3') }, binop: call('plus'), hasInitial: true, initial: 0 } as Reducer,
    (items) => {
      const m = new Map<unknown, number>()
      for (const v of items) m.set(FNS.mod3(v), FNS.plus(m.get(FNS.mod3(v)) ?? 0, v))
      return m
    },
  ],
  [{ op: 'custom', perPartition: call('countAll'), aggregate: call('total') }, (items) => items.length],
]

test('random pipelines of steps and reductions give what plain JavaScript gives, from arrays and from text blocks', async (t) => {
  const r = rng(33)
  const lines = Array.from({ length: 300 }, (_, i) => 'x'.repeat(i % 11) + (i % 5 === 0 ? 'é' : ''))
  const file = join(dir, 'lines.txt')
  writeFileSync(file, lines.join('\n') + '\n')
  const small = [0, 1, 2, 3, 4, 5, 'ab']
  for (let round = 0; round < 300; round++) {
    const steps = Array.from({ length: 1 + Math.floor(r() * 4) }, () => randomStep(r))
    const [reduce, plainReduce] = REDUCERS[Math.floor(r() * REDUCERS.length)]
    const fromText = r() < 0.5
    const includePath = fromText && r() < 0.5
    const source: PartitionSpec['source'] = fromText
      ? (bag.readText(file, { includePath }).parts[0].source as PartitionSpec['source'])
      : { kind: 'items', items: Array.from({ length: 40 }, (_, i) => (i % 4 === 3 ? `s${i}` : i)) }
    const start = fromText ? (includePath ? lines.map((l) => [l, file]) : lines) : (source as { items: unknown[] }).items
    let expected: unknown[] = start
    for (const s of steps) expected = plainStep(expected, s, small)
    const spec: PartitionSpec = { index: 0, source, steps, reduce, broadcast: 1 }
    const got = await runPartition(loader, spec, small)
    t.deepEqual(got, plainReduce(expected), `round ${round}: ${fromText ? `text${includePath ? ' with paths' : ''}` : 'items'} → ${steps.map((s) => s.op).join(' → ')} → ${reduce?.op ?? 'items'}`)
  }
})

test('a step that returns a Promise is awaited whether it is pushed or pulled; one whose first result was not a Promise is refused by name where its items are pulled', async (t) => {
  FNS.later = async (v: unknown) => v
  FNS.someLater = (v: number) => (v > 1 ? Promise.resolve(v) : v)
  const source = { kind: 'items' as const, items: [1, 2, 3] }
  const pushed: Step[] = [{ op: 'map', call: call('later') }]
  const pulled: Step[] = [{ op: 'map', call: call('later') }, { op: 'mapPartitions', call: call('reversed') }]
  t.deepEqual(await runPartition(loader, { index: 0, source, steps: pushed }), [1, 2, 3])
  t.deepEqual(await runPartition(loader, { index: 0, source, steps: pulled }), [3, 2, 1])
  t.deepEqual(await runPartition(loader, { index: 0, source, steps: [{ op: 'map', call: call('someLater') }] }), [1, 2, 3])
  FNS.spreadLater = async function* (v: number) {
    yield v
    await Promise.resolve()
    yield -v
  }
  for (const steps of [[{ op: 'flatMap', call: call('spreadLater') }], [{ op: 'flatMap', call: call('spreadLater') }, { op: 'mapPartitions', call: call('reversed') }]] as Step[][]) {
    const got = await runPartition(loader, { index: 0, source, steps })
    t.deepEqual(got, steps.length === 1 ? [1, -1, 2, -2, 3, -3] : [-3, 3, -2, 2, -1, 1], steps.map((x) => x.op).join(' → '))
  }
  const e = await t.throwsAsync(() => runPartition(loader, { index: 0, source, steps: [{ op: 'map', call: call('someLater') }, { op: 'mapPartitions', call: call('reversed') }] }))
  t.is((e as any).code, 'ERR_SPILLWAY_ASYNC_STEP')
  t.regex(e!.message, /the map function someLater returned a Promise where its first item's result was not one/)
})

/** FNS made async: each answers after a turn of the event loop (a random one of a few), so results come back out of order. */
function asyncLoader(r: () => number): FunctionLoader {
  return {
    get: async (d) => {
      const f = FNS[d.id]
      if (d.id === 'mod3') return f as never // a pulled join's key must be sync (async-steps.ts)
      return ((...a: unknown[]) => new Promise((res) => setTimeout(() => res(f(...a)), Math.floor(r() * 3)))) as never
    },
  }
}

test('random pipelines whose every function is async give what plain JavaScript gives, in order, at any concurrency', async (t) => {
  const r = rng(35)
  const small = [0, 1, 2, 3, 4, 5, 'ab']
  const load = asyncLoader(r)
  for (let round = 0; round < 60; round++) {
    const concurrency = [1, 2, 8][round % 3]
    const steps = Array.from({ length: 1 + Math.floor(r() * 4) }, () => randomStep(r)).map((s) => ('call' in s ? { ...s, call: { ...s.call, concurrency } } : s)) as Step[]
    const [reduce, plainReduce] = REDUCERS[Math.floor(r() * REDUCERS.length)]
    const items = Array.from({ length: 40 }, (_, i) => (i % 4 === 3 ? `s${i}` : i))
    let expected: unknown[] = items
    for (const s of steps) expected = plainStep(expected, s, small)
    const got = await runPartition(load, { index: 0, source: { kind: 'items', items }, steps, reduce, broadcast: 1 }, small)
    t.deepEqual(got, plainReduce(expected), `round ${round}: concurrency ${concurrency}: ${steps.map((s) => s.op).join(' → ')} → ${reduce?.op ?? 'items'}`)
  }
})

test('toParquet column types: all records of a partition, then unified across partitions; text beside bytes is refused by column', (t) => {
  const types = (rows: unknown[], columns?: string[]) => {
    const acc = columnTypesAccumulator(columns)
    for (const r of rows) acc.push(r)
    return acc.result()
  }
  const p0 = types([{ a: 1, b: null, c: 'x' }, { a: 2 ** 31, b: null, c: 'y' }])
  t.deepEqual(p0.kinds, ['INT64', undefined, 'UTF8'])
  const p1 = types([{ a: 0.5, b: 3n, c: null }])
  const p2 = types([])
  const u = unifyColumnTypes([p2, p0, p1])
  t.deepEqual(u.names, ['a', 'b', 'c'])
  t.deepEqual(u.kinds, ['DOUBLE', 'INT64', 'UTF8'])
  t.deepEqual(u.nullable, [false, true, true])
  t.deepEqual(types([{ a: 1, z: 2 }], ['z']).names, ['z'])
  t.throws(() => unifyColumnTypes([types([{ k: 'x' }]), types([{ k: new Uint8Array(1) }])]), { code: 'ERR_SPILLWAY_WRITE', message: /column "k" holds UTF8 in some records and BYTES in others/ })
  t.throws(() => types([{ k: true }, { k: 1 }]), { code: 'ERR_SPILLWAY_WRITE', message: /item 1 of a partition/ })
})
