// The P2P shuffle through bags, against plain JavaScript on the same data,
// on real workers.
import test from 'ava'
import { bag, clusterReport, clusterView, renderMetrics, type Client } from 'spillway'
import { sharedCluster } from './cluster-helpers'

let client!: Client
sharedCluster(test, (c) => (client = c))

interface Rec {
  id: number
  user: string
  n: number
}
const USERS = ['ann', 'bob', 'cy', 'dee', 'eve', '__proto__', 'constructor', 'zed']
const recs: Rec[] = Array.from({ length: 5000 }, (_, id) => ({ id, user: USERS[(id * 7) % USERS.length] + (id % 13), n: (id * 31) % 97 }))
const items = bag.fromSequence(recs, { npartitions: 12 })

function sortPairs<T>(xs: [unknown, T][]): [unknown, T][] {
  return [...xs].sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : String(a[0]) > String(b[0]) ? 1 : 0))
}

test.serial('groupBy: every key once, with all its items, in npartitions hash partitions', async (t) => {
  const grouped = items.groupBy('user', { npartitions: 5 })
  t.is(grouped.npartitions, 5)
  const got = (await client.compute(grouped)) as [string, Rec[]][]
  const expected = new Map<string, Rec[]>()
  for (const r of recs) expected.set(r.user, [...(expected.get(r.user) ?? []), r])
  t.is(got.length, expected.size)
  for (const [k, list] of got) t.deepEqual([...list].sort((a, b) => a.id - b.id), expected.get(k), k)
  // Steps after the shuffle fuse into the tasks that read it.
  const sizes = await client.compute(grouped.map(([k, list]: [string, Rec[]]) => [k, list.length]))
  // Visible: the report and the Prometheus exposition count the shuffle's bytes.
  t.true((await clusterReport(client)).shuffleGib > 0)
  const exposition = renderMetrics(await clusterView(client))
  t.regex(exposition, /spillway_worker_shuffle_received_bytes_total\{worker="[^"]+"\} [1-9]/)
  t.deepEqual(sortPairs(sizes as [string, number][]), sortPairs([...expected].map(([k, l]) => [k, l.length] as [string, number])))
})

test.serial('foldBy, frequencies and distinct with splitOut against plain JavaScript', async (t) => {
  const sums = new Map<string, number>()
  for (const r of recs) sums.set(r.user, (sums.get(r.user) ?? 0) + r.n)
  const folded = items.foldBy('user', (acc: number, r: Rec) => acc + r.n, 0, { combine: (a: number, b: number) => a + b, splitOut: 4 })
  t.is(folded.npartitions, 4)
  t.deepEqual(sortPairs((await client.compute(folded)) as [string, number][]), sortPairs([...sums]))
  const freq = new Map<number, number>()
  for (const r of recs) freq.set(r.n, (freq.get(r.n) ?? 0) + 1)
  t.deepEqual(sortPairs((await client.compute(items.pluck('n').frequencies({ splitOut: 3 }))) as [number, number][]), sortPairs([...freq]))
  t.deepEqual(((await client.compute(items.pluck('n').distinct({ splitOut: 3 }))) as number[]).sort((a, b) => a - b), [...freq.keys()].sort((a, b) => a - b))
  t.is(await client.compute(items.pluck('user').distinct({ splitOut: 6 }).count()), sums.size)
})

test.serial('join: inner, left and outer against plain JavaScript', async (t) => {
  const left = bag.fromSequence(Array.from({ length: 300 }, (_, i) => ({ k: i % 50, l: i })), { npartitions: 4 })
  const right = bag.fromSequence(Array.from({ length: 120 }, (_, i) => ({ k: 25 + (i % 60), r: i })), { npartitions: 3 })
  const L = Array.from({ length: 300 }, (_, i) => ({ k: i % 50, l: i }))
  const R = Array.from({ length: 120 }, (_, i) => ({ k: 25 + (i % 60), r: i }))
  const norm = (pairs: [any, any][]) => pairs.map(([a, b]) => `${a?.l ?? '-'}|${b?.r ?? '-'}`).sort()
  const inner: [any, any][] = []
  for (const a of L) for (const b of R) if (a.k === b.k) inner.push([a, b])
  const leftJ: [any, any][] = [...inner, ...L.filter((a) => !R.some((b) => b.k === a.k)).map((a) => [a, undefined] as [any, any])]
  const outer: [any, any][] = [...leftJ, ...R.filter((b) => !L.some((a) => a.k === b.k)).map((b) => [undefined, b] as [any, any])]
  t.deepEqual(norm((await client.compute(left.join(right, 'k', 'k'))) as [any, any][]), norm(inner))
  t.deepEqual(norm((await client.compute(left.join(right, 'k', 'k', { how: 'left', npartitions: 2 }))) as [any, any][]), norm(leftJ))
  t.deepEqual(norm((await client.compute(left.join(right, (a: any) => a.k, (b: any) => b.k, { how: 'outer' }))) as [any, any][]), norm(outer))
  // A small side (one partition) is broadcast to every partition: no shuffle.
  const small = bag.fromSequence(R, { npartitions: 1 })
  const bj = left.join(small, 'k', 'k')
  t.true(bj.parts.every((p) => p.source.kind !== 'shuffle'), 'broadcast, not shuffled')
  t.deepEqual(norm((await client.compute(bj)) as [any, any][]), norm(inner))
  t.deepEqual(norm((await client.compute(left.join(small, 'k', 'k', { how: 'left' }).map((x: any) => x))) as [any, any][]), norm(leftJ))
  t.deepEqual(norm((await client.compute(left.join(small, 'k', 'k', { how: 'outer' }))) as [any, any][]), norm(outer), 'outer joins shuffle even with a small side')
  t.throws(() => left.join(small, 'k', 'k', { how: 'outer', broadcast: true }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /broadcast/ })
})

test.serial('sortBy: range partitions from a sample, sorted across them, both directions', async (t) => {
  const sorted = await client.compute(items.sortBy('n', { npartitions: 4 }).pluck('n'))
  t.deepEqual(sorted, recs.map((r) => r.n).sort((a, b) => a - b))
  const desc = await client.compute(items.sortBy((r: Rec) => r.id, { npartitions: 3, descending: true }).pluck('id'))
  t.deepEqual(desc, recs.map((r) => r.id).sort((a, b) => b - a))
  const words = bag.fromSequence(['pear', 'apple', 'fig', 'kiwi', 'banana', 'cherry', 'date'], { npartitions: 3 })
  t.deepEqual(await client.compute(words.sortBy((w: string) => w, { npartitions: 2 })), ['apple', 'banana', 'cherry', 'date', 'fig', 'kiwi', 'pear'])
})

test.serial('shuffle regroups items by key without changing them; bad options are coded errors', async (t) => {
  const out = (await client.compute(items.shuffle('user', { npartitions: 7 }))) as Rec[]
  t.deepEqual([...out].sort((a, b) => a.id - b.id), recs)
  t.throws(() => items.groupBy('user', { npartitions: 0 }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /npartitions/ })
  t.throws(() => items.pluck('n').frequencies({ splitOut: -1 }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /splitOut/ })
  t.throws(() => items.join(items, 'id', 'id', { how: 'cross' as never }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /how/ })
})

test.serial('a shuffle whose outputs fail frees every shard on every worker', async (t) => {
  const { schedulerWorkers } = await import('spillway')
  const managed = async () => Object.values(await schedulerWorkers(client)).reduce((a, w) => a + ((w.metrics as any).managedBytes ?? 0), 0)
  const base = await managed()
  // The last input fails after the others have pushed their shards: no output ever reads them.
  const heavy = bag.fromSequence(Array.from({ length: 8 }, (_, i) => i), { npartitions: 8 }).flatMap((i: number) => {
    if (i === 7) throw new Error(`input ${i} refused`)
    return Array.from({ length: 200 }, (_, j) => ({ k: j % 10, p: 'x'.repeat(20_000) + i }))
  })
  const failing = heavy.groupBy('k', { npartitions: 4 })
  const pushed = async () => Object.values(await schedulerWorkers(client)).reduce((a, w) => a + ((w.metrics as any).shuffle?.receivedBytes ?? 0), 0)
  const pushedBefore = await pushed()
  const err = await t.throwsAsync(client.compute(failing))
  t.regex(err!.message, /refused/)
  const deadline = Date.now() + 10_000
  let now = await managed()
  while (now > base + 2 ** 20 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100))
    now = await managed()
  }
  t.true((await pushed()) - pushedBefore > 2 ** 20, 'shards were pushed before the failure')
  t.true(now <= base + 2 ** 20, `managed bytes back to ${now} (were ${base} before; the shards held about 28 MB)`)
  for (const w of Object.values(await schedulerWorkers(client))) t.is((w.metrics as any).shuffle.heldShards, 0, `${w.name} holds no shard`)
})

test.serial('the dashboard view shows a shuffle in flight: inputs sent, the barrier, outputs held', async (t) => {
  const slow = items.groupBy('user', { npartitions: 3 }).mapPartitions((groups: Iterable<unknown>) => {
    const end = Date.now() + 600
    while (Date.now() < end);
    return [...groups].length ? [1] : []
  })
  const pending = client.compute(slow)
  let seen: any
  const deadline = Date.now() + 20_000
  while (!seen && Date.now() < deadline) {
    seen = clusterView(client, 'test').shuffles.find((s) => s.barrier)
    if (!seen) await new Promise((r) => setTimeout(r, 20))
  }
  await pending
  t.truthy(seen, 'a shuffle past its barrier was shown')
  t.is(seen.label, 'group-by')
  t.deepEqual(seen.inputs, { done: 12, total: 12 })
  t.is(seen.outputs.total, 3)
  t.deepEqual(clusterView(client, 'test').shuffles, [], 'none once it is done')
})

test.serial('a group too large for a worker fails with ERR_SPILLWAY_GROUP_TOO_LARGE naming the key and its size', async (t) => {
  const skewed = bag.fromSequence(Array.from({ length: 2000 }, (_, i) => ({ k: i % 10 === 0 ? 'rare' : 'hot', pad: 'x'.repeat(500) })), { npartitions: 4 })
  const err = await t.throwsAsync(client.compute(skewed.groupBy('k', { npartitions: 2, maxGroupBytes: 200_000 })))
  t.is((err as any).code, 'ERR_SPILLWAY_GROUP_TOO_LARGE')
  // Caught as the shards are read: at most the 1800 items there are, maybe fewer.
  t.regex(err!.message, /group "hot" holds (at least )?\d+ items, about \d+ bytes serialized and \d+ bytes in memory, more than maxGroupBytes \(200000 bytes\)/)
  t.true(Number(/holds (?:at least )?(\d+) items/.exec(err!.message)![1]) <= 1800)
  // Under the bound, the same data groups.
  t.is((await client.compute(skewed.groupBy('k', { npartitions: 2, maxGroupBytes: 10_000_000 }))).length, 2)
})
