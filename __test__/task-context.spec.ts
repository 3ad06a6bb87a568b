// taskContext() where the user's functions run: bag steps, keys, binops
// and custom reductions (spillway's own task kinds, which hand the context
// to each call without AsyncLocalStorage, context.ts runSync), and submit
// tasks across awaits (AsyncLocalStorage, enabled only while such tasks run
// on Node 20 and 22). Run on every Node of the matrix (scripts/node-matrix.sh).

import test from 'ava'
import { join } from 'node:path'
import { bag, type Client } from 'spillway'
import { sharedCluster } from './cluster-helpers'

const FIX = join(__dirname, 'fixtures', 'tasks', 'context.mjs')
const fn = (name: string) => ({ module: FIX, name })

let client: Client
sharedCluster(test, (c) => (client = c))

/** `key|worker|signal live` strings: each names a worker of the cluster and a live signal; the keys. */
function keysOf(t: any, seen: string[]): string[] {
  const workers = Object.keys(client.nthreads())
  return seen.map((s) => {
    const [key, worker, live] = s.split('|')
    t.true(workers.includes(worker), `${worker} among ${workers.join(', ')}`)
    t.is(live, 'true')
    return key
  })
}

test('bag steps see their own partition task in taskContext(): key, worker and signal', async (t) => {
  const items = Array.from({ length: 60 }, (_, i) => i)
  const b = bag.fromSequence(items, { npartitions: 4 }).map(fn('withContext'))
  const got = (await client.compute(b)) as [number, string][]
  t.deepEqual(got.map(([v]) => v), items)
  const keys = keysOf(t, got.map(([, s]) => s))
  // One task per partition: 15 items each share its key, and no two partitions share one.
  for (let p = 0; p < 4; p++) t.deepEqual(new Set(keys.slice(p * 15, p * 15 + 15)).size, 1)
  t.is(new Set(keys).size, 4)
})

test('async bag steps see their partition task in taskContext() after their awaits, from the first item on', async (t) => {
  const items = Array.from({ length: 20 }, (_, i) => i)
  for (const concurrency of [1, 4]) {
    const got = (await client.compute(bag.fromSequence(items, { npartitions: 2 }).map(fn('withContextLater'), { concurrency }))) as [number, string][]
    t.deepEqual(got.map(([v]) => v), items)
    const keys = keysOf(t, got.map(([, s]) => s))
    t.is(new Set(keys.slice(0, 10)).size, 1)
    t.is(new Set(keys).size, 2)
  }
})

test('keys, binops and async custom reductions see taskContext(), after the shuffle’s awaits and their own', async (t) => {
  const items = Array.from({ length: 90 }, (_, i) => i)
  const pairs = bag.fromSequence(items, { npartitions: 5 }).map(fn('withContext'))
  // groupBy's key runs in the split task and again in the collect task, between reads of shards.
  const groups = (await client.compute(pairs.groupBy(fn('contextKey'), { npartitions: 3 }))) as [number, [number, string][]][]
  t.deepEqual(groups.map(([k, g]) => [k, g.map(([v]) => v).sort((a, b) => a - b)]).sort((a, b) => a[0] - b[0]), [0, 1, 2].map((k) => [k, items.filter((v) => v % 3 === k)]))
  const folded = (await client.compute(pairs.foldBy(fn('contextKey'), fn('addInContext'), 0, { combine: fn('add') }))) as [number, number][]
  t.deepEqual(folded.sort((a, b) => a[0] - b[0]), [0, 1, 2].map((k) => [k, items.filter((v) => v % 3 === k).reduce((a, b) => a + b, 0)]))
  const reduced = (await client.compute(pairs.reduction(fn('contextAcrossAwaits'), fn('concat')))) as [string, string, number?][]
  const perPartition = reduced.filter((r) => r[0] !== 'aggregate') as [string, string, number][]
  t.is(perPartition.length, 5)
  t.is(perPartition.reduce((a, r) => a + r[2], 0), 90)
  // The same task before and after the awaits.
  for (const [before, after] of perPartition) t.is(after, before)
  keysOf(t, [...perPartition.map((r) => r[0]), reduced.find((r) => r[0] === 'aggregate')![1]])
})

test('submit tasks see their own taskContext() after awaits, many at once on each worker', async (t) => {
  const ms = Array.from({ length: 24 }, (_, i) => (i * 7) % 23)
  const futures = client.map(fn('keyAfterAwaits'), ms, { key: ms.map((m, i) => `ctx-${i}-${m}`), pure: false })
  const got = (await client.gather(futures)) as [string, string][]
  got.forEach(([before, after], i) => {
    t.is(keysOf(t, [before])[0], futures[i].key)
    t.is(after, before)
  })
  // And again once every earlier run has ended (AsyncLocalStorage re-enabled where it is hooked).
  const again = await client.submit(fn('keyAfterAwaits'), [3], { key: 'ctx-again' }).result()
  t.deepEqual(keysOf(t, again as string[]), ['ctx-again', 'ctx-again'])
})
