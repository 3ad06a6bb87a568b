// Shuffles whose items mix the shapes the binary shard layout carries
// (strings, numbers incl. -0 and NaN, bigints, booleans, null, pairs, flat
// records, unicode, big strings) with items it leaves to v8.serialize (Maps,
// Dates, nested arrays, undefined): every kind of shuffle against plain
// JavaScript on the same data, on real workers.
import test from 'ava'
import { isDeepStrictEqual } from 'node:util'
import { bag, type Client } from 'spillway'
import { sharedCluster } from './cluster-helpers'

let client!: Client
sharedCluster(test, (c) => (client = c))

type Item = { i: number; k: number; [f: string]: unknown }
function make(i: number): Item {
  const k = (i * 7) % 23
  switch (i % 10) {
    case 6:
      return { i, k, m: new Map<unknown, unknown>([[i, 'x'], ['y', [1n, null]]]) }
    case 7:
      return { i, k, d: new Date(i * 1000) }
    case 8:
      return { i, k, nested: [i, [i, 'ü']], u: undefined }
    case 9:
      return { i, k, z: -0, n: NaN, b: BigInt(i) * 10n ** 20n, big: 'ä名'.repeat(5000 + i), t: true, nul: null }
    default:
      return { i, k, v: i * 1.5, s: `${'héllo'.slice(0, 1 + (i % 5))} 😀 ${i}` }
  }
}
const N = 4000
const data = Array.from({ length: N }, (_, i) => make(i))
const items = bag.fromSequence(data, { npartitions: 9 })
const byI = (a: Item, b: Item) => a.i - b.i

test.serial('groupBy over mixed shapes: every group exactly its items, -0, NaN, bigints, Maps and Dates intact', async (t) => {
  const got = (await client.compute(items.groupBy('k', { npartitions: 5 }))) as [number, Item[]][]
  const expected = new Map<number, Item[]>()
  for (const x of data) expected.set(x.k, [...(expected.get(x.k) ?? []), x])
  t.is(got.length, expected.size)
  for (const [k, list] of got) t.true(isDeepStrictEqual([...list].sort(byI), expected.get(k)), `group ${k}`)
  const z = got.flatMap(([, l]) => l).find((x) => x.i === 9)!
  t.true(Object.is(z.z, -0) && Number.isNaN(z.n) && z.b === 9n * 10n ** 20n)
  t.deepEqual(Object.keys(z), Object.keys(make(9)), 'record keys in their order')
})

test.serial('join over mixed shapes: inner and outer pairs exactly as plain JavaScript', async (t) => {
  const right = Array.from({ length: 60 }, (_, r) => ({ k: r % 30, r, tag: ['a', 'ß', '名'][r % 3] }))
  const norm = (pairs: [Item | undefined, any][]) => [...pairs].sort((a, b) => (a[0]?.i ?? -1) - (b[0]?.i ?? -1) || (a[1]?.r ?? -1) - (b[1]?.r ?? -1))
  for (const how of ['inner', 'outer'] as const) {
    const got = (await client.compute(items.join(bag.fromSequence(right, { npartitions: 3 }), 'k', 'k', { how, npartitions: 4 }))) as [Item | undefined, any][]
    const expected: [Item | undefined, any][] = []
    for (const l of data) {
      const rs = right.filter((r) => r.k === l.k)
      for (const r of rs) expected.push([l, r])
      if (!rs.length && how === 'outer') expected.push([l, undefined])
    }
    if (how === 'outer') for (const r of right) if (!data.some((l) => l.k === r.k)) expected.push([undefined, r])
    t.is(got.length, expected.length, how)
    t.true(isDeepStrictEqual(norm(got), norm(expected)), how)
  }
})

test.serial('sortBy over mixed shapes: the items in order, unchanged', async (t) => {
  const got = (await client.compute(items.sortBy((x: Item) => -x.i, { npartitions: 4 }))) as Item[]
  t.true(isDeepStrictEqual(got, [...data].sort((a, b) => b.i - a.i)))
})

test.serial('foldBy, frequencies and distinct with splitOut over mixed values, against plain JavaScript', async (t) => {
  const sums = new Map<number, bigint>()
  for (const x of data) sums.set(x.k, (sums.get(x.k) ?? 0n) + BigInt(x.i))
  const folded = (await client.compute(items.foldBy('k', (a: bigint, x: Item) => a + BigInt(x.i), 0n, { combine: (a: bigint, b: bigint) => a + b, splitOut: 3 }))) as [number, bigint][]
  const sorted = <K, V>(pairs: Iterable<[K, V]>) => [...pairs].sort((a, b) => String(a[0]).localeCompare(String(b[0])))
  t.deepEqual(sorted(folded), sorted(sums))
  const label = (x: Item) => (x.i % 10 === 9 ? 'big' : typeof x.s === 'string' ? x.s.slice(0, 8) : 'other')
  const freq = new Map<string, number>()
  for (const x of data) freq.set(label(x), (freq.get(label(x)) ?? 0) + 1)
  t.deepEqual(sorted((await client.compute(items.map(label).frequencies({ splitOut: 4 }))) as [string, number][]), sorted(freq))
  // Values of every scalar kind and pairs of them, distinct by value.
  const val = (x: Item) => [x.k, `k${x.k}`, BigInt(x.k), [x.k, 'é'], x.k % 2 === 0, null][x.i % 6]
  const seen = new Map<string, unknown>()
  for (const x of data) seen.set(typeof val(x) + JSON.stringify(val(x), (_, v) => (typeof v === 'bigint' ? `${v}` : v)), val(x))
  const got = (await client.compute(items.map(val).distinct({ splitOut: 3 }))) as unknown[]
  t.is(got.length, seen.size)
  const canon = (xs: unknown[]) => xs.map((v) => typeof v + JSON.stringify(v, (_, y) => (typeof y === 'bigint' ? `${y}` : y))).sort()
  t.deepEqual(canon(got), canon([...seen.values()]))
})
