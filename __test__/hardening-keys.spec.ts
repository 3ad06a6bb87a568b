// Issue 32, as a user meets it on real workers: task keys that collided
// (Maps, Sets, NaN / null, -0, Dates, typed arrays, BigInt), keys compared
// by identity once they crossed a process (tuples, objects, Dates), sortBy
// over NaN, undefined and mixed types, async steps kept as items (now
// awaited; only a step async for some items where they are pulled is refused), and
// unserializable values named by spillway's own closures.
import test from 'ava'
import { join } from 'node:path'
import { bag, schedulerWorkers, type Client } from 'spillway'
import { sharedCluster, until } from './cluster-helpers'

let client!: Client
sharedCluster(test, (c) => (client = c))

const FIX = join(__dirname, 'fixtures', 'tasks', 'keys.mjs')

test.serial('task keys: a persisted Map bag does not answer for another Map bag', async (t) => {
  const first = await client.persist(bag.fromSequence([new Map([[1, 'a']])]))
  t.deepEqual(await client.compute(first), [new Map([[1, 'a']])])
  t.deepEqual(await client.compute(bag.fromSequence([new Map([[2, 'b']])])), [new Map([[2, 'b']])])
  first.release()
})

test.serial('task keys: NaN, null, undefined, -0, Dates, typed arrays and Sets as items or arguments each give their own values', async (t) => {
  const asText = (v: unknown) => client.compute(bag.fromSequence([v]).map((x: unknown) => (Object.is(x, -0) ? '-0' : String(x))))
  t.deepEqual(await Promise.all([NaN, null, undefined, 0, -0].map(asText)), [['NaN'], ['null'], ['undefined'], ['0'], ['-0']])
  const times = await Promise.all([new Date(1000), new Date(2000)].map((d) => client.compute(bag.fromSequence([d]).map((x: Date) => x.getTime()))))
  t.deepEqual(times, [[1000], [2000]])
  const bytes = await Promise.all([new Uint8Array([255]), new Int8Array([-1]), new Uint8Array([7])].map((a) => client.compute(bag.fromSequence([a]).map((x: ArrayLike<number>) => x[0]))))
  t.deepEqual(bytes, [[255], [-1], [7]])
  const withSet = (s: Set<number>) => client.compute(bag.fromSequence([10]).map((x: number, set: Set<number>) => [...set].map((v) => v * x), s))
  t.deepEqual(await Promise.all([withSet(new Set([1])), withSet(new Set([2]))]), [[[10]], [[20]]])
})

test.serial('task keys: BigInt items, arguments and group keys work', async (t) => {
  const big = bag.fromSequence([1n, 2n, 3n, 2n ** 70n], { npartitions: 2 })
  t.deepEqual(await client.compute(big.map((x: bigint, m: bigint) => x * m, 3n)), [3n, 6n, 9n, 3n * 2n ** 70n])
  const groups = (await client.compute(big.groupBy((x: bigint) => x % 2n, { npartitions: 2 }))) as [bigint, bigint[]][]
  t.deepEqual(groups.map(([k, xs]) => [k, [...xs].sort((a, b) => (a < b ? -1 : 1))] as const).sort((a, b) => Number(a[0] - b[0])), [
    [0n, [2n, 2n ** 70n]],
    [1n, [1n, 3n]],
  ])
})

test.serial('task keys: a function or symbol in a spec is ERR_SPILLWAY_INVALID_ARGUMENT naming its path, when the bag is built', (t) => {
  t.throws(() => bag.fromSequence([1, { f: () => 1 }]), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /spec\.parts\[1\]\.source\.items\[0\]\.f: got "a function \(f\)"/ })
  t.throws(() => bag.fromSequence([1]).map((x: number) => x, Symbol('s')), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /spec\.steps\[0\]\.call\.args\[0\]: got "a symbol \(s\)"/ })
})

const records = Array.from({ length: 100 }, (_, i) => ({ id: i, k: i % 2 === 0 ? 'even' : 'odd' }))

test.serial('keys by value: groupBy((x) => [x.k, "s"]) over 2 keys gives 2 groups with every item', async (t) => {
  const groups = (await client.compute(bag.fromSequence(records, { npartitions: 10 }).groupBy((x: { k: string }) => [x.k, 's'], { npartitions: 4 }))) as [unknown, { id: number }[]][]
  t.is(groups.length, 2)
  const byKey = new Map(groups.map(([k, xs]) => [JSON.stringify(k), xs.map((x) => x.id).sort((a, b) => a - b)]))
  t.deepEqual(byKey.get('["even","s"]'), records.filter((r) => r.k === 'even').map((r) => r.id))
  t.deepEqual(byKey.get('["odd","s"]'), records.filter((r) => r.k === 'odd').map((r) => r.id))
})

test.serial('keys by value: a join on array keys gives 16 pairs, shuffled or broadcast; object keys in any property order and Date keys match', async (t) => {
  const left = bag.fromSequence(Array.from({ length: 8 }, (_, i) => ({ l: i, k: i % 2 })), { npartitions: 4 })
  const right = bag.fromSequence(Array.from({ length: 4 }, (_, i) => ({ r: i, k: i % 2 })), { npartitions: 2 })
  const shuffled = await client.compute(left.join(right, (x: { k: number }) => [x.k, 'tag'], (x: { k: number }) => [x.k, 'tag'], { npartitions: 3 }))
  t.is(shuffled.length, 16)
  const broadcast = await client.compute(left.join(right.repartition(1), (x: { k: number }) => [x.k], (x: { k: number }) => [x.k]))
  t.is(broadcast.length, 16)
  for (const [l, r] of [...shuffled, ...broadcast] as [{ k: number }, { k: number }][]) t.is(l.k, r.k)
  // Objects with their properties in another order, and Dates, are the same keys.
  const objects = await client.compute(left.join(right, (x: { k: number }) => ({ a: x.k, b: 1 }), (x: { k: number }) => ({ b: 1, a: x.k }), { how: 'outer', npartitions: 2 }))
  t.is(objects.length, 16, 'outer: every pair matched, none alone')
  const dates = await client.compute(left.join(right, (x: { k: number }) => new Date(x.k * 1000), (x: { k: number }) => new Date(x.k * 1000), { npartitions: 2 }))
  t.is(dates.length, 16)
})

test.serial('keys by value: foldBy, frequencies and distinct over tuple, object, Date, NaN and -0 keys, with and without splitOut', async (t) => {
  const items = bag.fromSequence([[1, 'a'], [1, 'a'], [2, 'b'], { x: 1, y: 2 }, { y: 2, x: 1 }, new Date(5), new Date(5), NaN, NaN, 0, -0, 1, 1n, '1'], { npartitions: 5 })
  for (const splitOut of [undefined, 3]) {
    const freq = (await client.compute(items.frequencies({ splitOut }))) as [unknown, number][]
    const counts = new Map(freq.map(([k, n]) => [k instanceof Date ? `date ${k.getTime()}` : typeof k === 'bigint' ? `${k}n` : typeof k === 'object' ? JSON.stringify(k) : `${typeof k} ${String(k)}`, n]))
    t.deepEqual(Object.fromEntries(counts), { '[1,"a"]': 2, '[2,"b"]': 1, '{"x":1,"y":2}': 2, 'date 5': 2, 'number NaN': 2, 'number 0': 2, 'number 1': 1, '1n': 1, 'string 1': 1 }, `splitOut ${splitOut}`)
    t.is(((await client.compute(items.distinct({ splitOut }))) as unknown[]).length, 9)
  }
  const sums = (await client.compute(bag.fromSequence(records, { npartitions: 7 }).foldBy((x: { k: string }) => ({ k: x.k }), (a: number, x: { id: number }) => a + x.id, 0, { combine: (a: number, b: number) => a + b, splitOut: 2 }))) as [{ k: string }, number][]
  t.deepEqual(Object.fromEntries(sums.map(([k, n]) => [k.k, n])), { even: 2450, odd: 2500 })
})

test.serial('keys by value: a key holding a function or a symbol is ERR_SPILLWAY_UNHASHABLE_KEY naming it', async (t) => {
  const items = bag.fromSequence([1, 2, 3], { npartitions: 2 })
  const e1 = await t.throwsAsync(client.compute(items.groupBy((x: number) => [x, () => x])), { code: 'ERR_SPILLWAY_UNHASHABLE_KEY' })
  t.regex(e1!.message, /the key \[ \d, \[Function \(anonymous\)\] \] cannot be compared by value: it holds a function at \[1\]/)
  const e2 = await t.throwsAsync(client.compute(items.foldBy((x: number) => ({ tag: Symbol('t') }), (a: number, x: number) => a + x, 0)), { code: 'ERR_SPILLWAY_UNHASHABLE_KEY' })
  t.regex(e2!.message, /the foldBy key \{ tag: Symbol\(t\) \} cannot be compared by value: it holds a symbol \(t\) at \.tag/)
})

test.serial('sortBy with NaN, undefined, null, mixed numbers and strings: 0 inversions, every item once, both directions, nulls first when asked', async (t) => {
  const keys: unknown[] = Array.from({ length: 14_000 }, (_, i) => (i % 17 === 0 ? NaN : i % 19 === 0 ? undefined : i % 23 === 0 ? null : i % 5 === 0 ? `s${(i * 7919) % 1000}` : ((i * 7919) % 10_007) - 5000))
  const items = bag.fromSequence(keys.map((k, id) => ({ id, k })), { npartitions: 12 })
  // The documented order: numbers (0), then strings (1), then NaN (2), null (3), undefined (4).
  const kind = (v: unknown) => (typeof v === 'number' ? (v === v ? 0 : 2) : typeof v === 'string' ? 1 : v === null ? 3 : 4)
  for (const [options, kinds] of [
    [{}, [0, 1, 2, 3, 4]],
    [{ descending: true }, [1, 0, 2, 3, 4]],
    [{ nullsLast: false }, [2, 3, 4, 0, 1]],
  ] as const) {
    const sorted = (await client.compute(items.sortBy((x: { k: unknown }) => x.k, { npartitions: 5, ...options }))) as { id: number; k: unknown }[]
    t.deepEqual(sorted.map((x) => x.id).sort((a, b) => a - b), keys.map((_, i) => i), 'every item once')
    const got = sorted.map((x) => x.k)
    t.deepEqual([...new Set(got.map(kind))], [...kinds], `${JSON.stringify(options)}: the kinds in their documented places`)
    const sign = 'descending' in options ? -1 : 1
    let inversions = 0
    for (let i = 1; i < got.length; i++) {
      const [a, b] = [got[i - 1] as number, got[i] as number]
      const [ka, kb] = [kinds.indexOf(kind(a) as never), kinds.indexOf(kind(b) as never)]
      if (ka > kb || (ka === kb && kind(a) <= 1 && sign * (a < b ? -1 : a > b ? 1 : 0) > 0)) inversions++
    }
    t.is(inversions, 0, `${JSON.stringify(options)}: no inversion`)
  }
})

test.serial('topk ranks NaN, null and undefined below every value', async (t) => {
  const top = await client.compute(bag.fromSequence([3, NaN, null, 10, undefined, -1, 7], { npartitions: 3 }).topk(3))
  t.deepEqual(top, [10, 7, 3])
  const all = await client.compute(bag.fromSequence([NaN, 1, null], { npartitions: 2 }).topk(3))
  t.deepEqual(all, [1, NaN, null])
})

test.serial('a step async for some items only, pulled before mapPartitions, fails with ERR_SPILLWAY_ASYNC_STEP naming the function, instead of keeping Promises as items', async (t) => {
  // Async steps are awaited (async-steps.spec.ts); this one is not async for its first item.
  const items = bag.fromSequence([1, 2, 3], { npartitions: 1 })
  const p = client.compute(items.map(function sometimes(x: number) { return x > 1 ? Promise.resolve(x) : x }).mapPartitions((xs: Iterable<number>) => [...xs]))
  const e = await t.throwsAsync(p, { code: 'ERR_SPILLWAY_ASYNC_STEP' })
  t.regex(e!.message, /the map function sometimes returned a Promise where its first item's result was not one/)
  // A custom reduction's functions are awaited as the task's value: async ones work.
  t.is(await client.compute(items.reduction(async (xs: Iterable<number>) => [...xs].length, async (ns: number[]) => ns.reduce((a, b) => a + b, 0))), 3)
})

test.serial('a task returning a Future fails with ERR_SPILLWAY_UNSERIALIZABLE that names the Future, not an internal closure', async (t) => {
  for (const [name, where] of [
    ['returnsSubFuture', /it is a Future \(key one-/],
    ['returnsFutureInside', /it holds a Future \(key one-[0-9a-f]+\) at \.f/],
  ] as const) {
    const f = client.submit({ module: FIX, name }, [])
    const e = await t.throwsAsync(f.result(), { code: 'ERR_SPILLWAY_UNSERIALIZABLE' })
    t.regex(e!.message, new RegExp(`^the result of task "${name}-[0-9a-f]+" \\(${name}\\) of type (Future|Object) cannot be stored`))
    t.regex(e!.message, where)
    t.regex(e!.message, /return `await future\.result\(\)` instead/)
    t.notRegex(e!.message, /=>|status\(\)/, 'no source text')
    f.release()
  }
})

test.serial('a function as an item is ERR_SPILLWAY_UNSERIALIZABLE whether it is stored or shuffled by groupBy', async (t) => {
  const fns = bag.fromSequence([1, 2, 3], { npartitions: 2 }).map((x: number) => () => x)
  for (const p of [client.compute(fns), client.compute(fns.groupBy(() => 1, { npartitions: 2 }))]) {
    const e = await t.throwsAsync(p, { code: 'ERR_SPILLWAY_UNSERIALIZABLE' })
    t.regex(e!.message, /cannot be stored: it holds a function at \[0\]; return Buffers, TypedArrays or plain data/)
    t.notRegex(e!.message, /=>/, 'no source text')
  }
})

test.serial('nothing is left behind: no task on the scheduler, no shard on a worker', async (t) => {
  await until(() => client.scheduler.tasks.size === 0, 20_000, 'every key released')
  for (const w of Object.values(await schedulerWorkers(client))) t.is((w.metrics as any).shuffle?.heldShards ?? 0, 0, `${w.name} holds no shard`)
})
