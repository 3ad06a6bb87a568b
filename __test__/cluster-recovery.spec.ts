import test from 'ava'
import { combinePartials, finishPartial, generateChunk, KilledWorkerError, random, reduceChunk, schedulerWorkers } from 'spillway'
import { alive, cluster, GIB, until } from './cluster-helpers'

const SHAPE = [8_000, 8_000]
const CHUNKS = [1_000, 1_000]

/** The exact randint sum computed here, in this process, chunk by chunk. */
async function referenceSum(seed: number): Promise<number> {
  const parts = []
  for (let id = 0; id < 64; id++) {
    const data = await generateChunk({ kind: 'randint', seed, chunkId: id, len: 1_000_000, low: 0, high: 10 })
    parts.push(await reduceChunk(data, 'int64', 'sum'))
  }
  return finishPartial(combinePartials(parts), 'sum')
}

test('the same seed gives bitwise the same results with 1 and 2 workers', async (t) => {
  const results = []
  for (const maxWorkers of [1, 2]) {
    const { client, cluster: c } = await cluster(t, { maxWorkers })
    t.is(Object.keys(client.nthreads()).length, maxWorkers)
    const x = await client.persist(random.random(SHAPE, { chunks: CHUNKS, seed: 42 }))
    const y = random.randint(0, 10, SHAPE, { chunks: CHUNKS, seed: 42 })
    results.push([await client.compute(x.mean()), await client.compute(x.std()), await client.compute(y.sum())])
    await client.close()
    await c.close()
  }
  t.deepEqual(results[0], results[1])
  t.is(results[0][2], await referenceSum(42))
})

test('a worker killed with SIGKILL mid persist + reduce loses nothing: its chunks are recomputed', async (t) => {
  const { client, cluster: c } = await cluster(t)
  const x = await client.persist(random.randint(0, 10, SHAPE, { chunks: CHUNKS, seed: 7 }))
  const s = client.scheduler
  await until(() => [...s.tasks.values()].filter((r) => r.state === 'memory').length >= 10, 20_000, 'some chunks to finish')
  const victim = Object.values(await schedulerWorkers(client))[0]
  process.kill(victim.pid, 'SIGKILL')
  const sum = await client.compute(x.sum())
  t.is(sum, await referenceSum(7))
  t.true(s.lostWorkers >= 1)
  await until(() => s.workers.size === 2, 20_000, 'the nanny to start a replacement')
  t.false(Object.keys(client.nthreads()).includes(victim.address), 'the replacement is a new worker')
  await until(() => !alive(victim.pid), 5_000, 'the victim to be gone')
  t.is(c.nannies.filter((n) => n.restarts >= 1).length, 1)
})

test('a chunk larger than a worker can make is refused before any task starts, naming the figures; the cluster stays usable', async (t) => {
  const { client, cluster: c } = await cluster(t)
  // One 1.6 GB chunk on a 1 GiB worker: it used to kill three workers before failing.
  const big = random.random([200_000_000], { chunks: 200_000_000, seed: 1 })
  const before = client.scheduler.totalTasks
  const err = await t.throwsAsync(async () => {
    const p = await client.persist(big)
    await p.wait()
  })
  t.is((err as any).code, 'ERR_SPILLWAY_TOO_LARGE', String(err))
  t.true(err!.message.includes(`chunk ${JSON.stringify(big.keys()[0])} is 1526 MiB (200000000 elements)`), err!.message)
  t.regex(err!.message, /more than 30% of a worker's 1024 MiB limit: use smaller chunks, of at most 102 MiB \(13421772 elements\)/)
  t.is(client.scheduler.totalTasks, before, 'nothing was submitted')
  t.is(c.nannies.reduce((a, n) => a + n.restarts, 0), 0)
  const small = await client.persist(random.random([1_000_000], { chunks: 100_000, seed: 2 }))
  await small.wait()
  const mean = await client.compute(small.mean())
  t.true(Math.abs(mean - 0.5) < 0.01)
})
