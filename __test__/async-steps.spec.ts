// Issue 35, item 1: bag steps, key functions and reducers that return
// promises are awaited on the workers, in the items' order, with at most
// `concurrency` pending per partition; a rejection fails the task as a
// throw does.
import test from 'ava'
import { bag, type Client } from 'spillway'
import { sharedCluster } from './cluster-helpers'

let client!: Client
sharedCluster(test, (c) => (client = c))


test.serial('async map, filter and flatMap give their items in order, from async functions and from plain ones that return promises', async (t) => {
  const xs = bag.fromSequence(Array.from({ length: 30 }, (_, i) => i), { npartitions: 3 })
  // Later items answer sooner: order comes from the items, not the answers.
  const slow = async (x: number) => {
    await new Promise((r) => setTimeout(r, 30 - x))
    return x * 10
  }
  t.deepEqual(await client.compute(xs.map(slow, { concurrency: 4 })), Array.from({ length: 30 }, (_, i) => i * 10))
  t.deepEqual(await client.compute(xs.filter(async (x: number) => x % 3 === 0, { concurrency: 2 })), [0, 3, 6, 9, 12, 15, 18, 21, 24, 27])
  t.deepEqual(await client.compute(xs.flatMap((x: number) => Promise.resolve(x < 3 ? [x, -x] : []))), [0, -0, 1, -1, 2, -2])
  t.deepEqual(await client.compute(xs.filter((x: number) => x < 4).flatMap(async function* (x: number) { yield x; yield x + 0.5 })), [0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5])
  t.deepEqual(await client.compute(xs.map((x: number) => Promise.resolve(x)).mapPartitions(async (items: Iterable<number>) => [[...items].length])), [10, 10, 10])
  // A sync step after an async one, then a reduction.
  t.is(await client.compute(xs.map(slow).map((x: number) => x + 1).sum()), 4380)
})

test.serial('concurrency bounds the promises pending per partition: the largest count seen inside the worker is the option', async (t) => {
  // Each item reports how many calls of its partition were pending while it ran (a count the worker keeps on globalThis).
  const inFlight = async (item: { part: number; i: number }) => {
    const g = globalThis as any
    const key = `spillwayTestInFlight-${item.part}`
    g[key] = (g[key] ?? 0) + 1
    const seen = g[key]
    await new Promise((r) => setTimeout(r, 2))
    g[key]--
    return [item.i, seen]
  }
  for (const [concurrency, tag] of [[1, 'a'], [8, 'b'], [3, 'c']] as const) {
    const items = Array.from({ length: 40 }, (_, i) => ({ part: `${tag}${Math.floor(i / 20)}` as unknown as number, i }))
    const out = (await client.compute(bag.fromSequence(items, { npartitions: 2 }).map(inFlight, { concurrency }))) as [number, number][]
    t.deepEqual(out.map(([i]) => i), items.map((x) => x.i), 'order kept')
    t.is(Math.max(...out.map(([, n]) => n)), concurrency, `concurrency ${concurrency}`)
  }
  const e = t.throws(() => bag.fromSequence([1]).map(async (x: number) => x, { concurrency: 0 }))
  t.is((e as any).code, 'ERR_SPILLWAY_INVALID_ARGUMENT')
  t.regex(e!.message, /options\.concurrency/)
})

test.serial('async key functions and reducers: groupBy, foldBy, sortBy, join, topk', async (t) => {
  const xs = bag.fromSequence([5, 3, 8, 1, 9, 2, 7], { npartitions: 3 })
  const parity = async (x: number) => (x % 2 === 0 ? 'even' : 'odd')
  const groups = (await client.compute(xs.groupBy(parity, { npartitions: 2, concurrency: 3 }))) as [string, number[]][]
  t.deepEqual(Object.fromEntries(groups.map(([k, v]) => [k, [...v].sort((a, b) => a - b)])), { even: [2, 8], odd: [1, 3, 5, 7, 9] })
  const sums = (await client.compute(xs.foldBy(parity, async (acc: number, x: number) => acc + x, 0))) as [string, number][]
  t.deepEqual(Object.fromEntries(sums), { even: 10, odd: 25 })
  // An async binop folds each key's items in order: a string shows the order.
  const seq = (await client.compute(bag.fromSequence(['a', 'b', 'c', 'd'], { npartitions: 1 }).foldBy(() => 'k', async (acc: string, x: string) => acc + x, ''))) as [string, string][]
  t.deepEqual(seq, [['k', 'abcd']])
  t.deepEqual(await client.compute(xs.sortBy(async (x: number) => -x, { npartitions: 2 })), [9, 8, 7, 5, 3, 2, 1])
  t.deepEqual(await client.compute(xs.topk(2, async (x: number) => -x)), [1, 2])
  const names = bag.fromSequence([{ id: 1, name: 'one' }, { id: 2, name: 'two' }], { npartitions: 2 })
  const pairs = (await client.compute(bag.fromSequence([1, 2, 2, 3], { npartitions: 2 }).join(names, async (x: number) => x, async (r: { id: number }) => r.id, { npartitions: 2, broadcast: false }))) as [number, { name: string }][]
  t.deepEqual(pairs.map(([l, r]) => `${l}:${r.name}`).sort(), ['1:one', '2:two', '2:two'])
  const broadcast = (await client.compute(bag.fromSequence([1, 2, 3], { npartitions: 2 }).join(names.repartition(1), async (x: number) => x, async (r: { id: number }) => r.id))) as [number, { name: string }][]
  t.deepEqual(broadcast.map(([l, r]) => `${l}:${r.name}`), ['1:one', '2:two'])
})

test.serial("an async step that rejects fails the task with the user's error, as a throw does", async (t) => {
  const xs = bag.fromSequence([1, 2, 3, 4], { npartitions: 2 })
  const thrown = await t.throwsAsync(client.compute(xs.map((x: number) => { if (x === 3) throw new RangeError(`no ${x}`); return x })))
  const rejected = await t.throwsAsync(client.compute(xs.map(async (x: number) => { if (x === 3) throw new RangeError(`no ${x}`); return x }, { concurrency: 2 })))
  const untagged = (m: string) => m.replace(/^task "[^"]+"/, 'task')
  t.is(untagged(rejected!.message), untagged(thrown!.message))
  t.is((rejected as any).code, (thrown as any).code)
  t.regex(rejected!.message, /no 3/)
  // The same error a throw gives, its details (and `cause`, where errors carry one) included.
  const remote = (e: any) => ({ name: e.details?.remote?.name, message: e.details?.remote?.message })
  t.deepEqual(remote(rejected), { name: 'RangeError', message: 'no 3' })
  t.deepEqual(remote(rejected), remote(thrown))
  t.is((rejected as any).cause?.message, (thrown as any).cause?.message)
  const key = await t.throwsAsync(client.compute(xs.groupBy(async (x: number) => { if (x === 2) throw new TypeError('bad key'); return x })))
  t.regex(key!.message, /bad key/)
})
