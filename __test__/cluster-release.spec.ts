import test from 'ava'
import { random, schedulerWorkers, type Client } from 'spillway'
import { cluster, sharedCluster, until } from './cluster-helpers'

// One cluster for the tests that leave its workers as they found them (the
// same workers as cluster()'s); the tests run one at a time.
let client!: Client
sharedCluster(test, (c) => (client = c), { reserveMemGb: 1 })

const managed = async (client: Parameters<typeof schedulerWorkers>[0]) =>
  Object.values(await schedulerWorkers(client)).reduce((s, w) => s + ((w.metrics as any).managedBytes ?? 0), 0)

test.serial('an array released while its tasks still run leaves nothing held on the workers or counted by the scheduler', async (t) => {
  const s = client.scheduler
  const x = await client.persist(random.random([4_000_000], { chunks: 250_000, seed: 5 }))
  // Each worker has up to 4 runs queued behind its one thread at this point.
  t.true([...s.tasks.values()].some((r) => r.state === 'processing'), 'tasks are still running')
  x.release()
  t.is(s.tasks.size, 0)
  for (const w of Object.values(await schedulerWorkers(client))) t.is(w.tasks.processing, 0, `${w.address} still counts released tasks`)
  for (const w of s.workers.values()) t.is(w.load(), 0)
  // A run already executing at the release still stores its chunk, which is
  // freed when its result lands; runs still waiting for a slot are skipped.
  const idle = async () => Object.values(await schedulerWorkers(client)).every((w) => (w.metrics as any).taskCounts.executing === 0)
  await until(async () => (await idle()) && (await managed(client)) === 0, 10_000, 'the workers to free every released chunk')
  await new Promise((r) => setTimeout(r, 300))
  t.is(await managed(client), 0)
})

test.serial('a worker lost after a release does not bring the released tasks back', async (t) => {
  // Its own cluster: it SIGKILLs a worker and counts lostWorkers from zero.
  const { client } = await cluster(t)
  const s = client.scheduler
  const x = await client.persist(random.random([4_000_000], { chunks: 250_000, seed: 6 }))
  const victim = Object.values(await schedulerWorkers(client))[0]
  x.release()
  process.kill(victim.pid, 'SIGKILL')
  await until(() => s.lostWorkers === 1 && s.workers.size === 2, 20_000, 'a replacement worker')
  await until(async () => (await managed(client)) === 0, 10_000, 'the workers to hold nothing')
  t.is(s.tasks.size, 0)
  for (const w of s.workers.values()) t.is(w.held.size + w.processing.size, 0)
})

test.serial('persisting again right after a release keeps the new chunks: only the stale results are freed', async (t) => {
  // Tiny chunks, few enough that the second persist is placed on the workers
  // while the first one's runs are still queued there, and a stale release
  // would land after the new chunk is stored.
  const a = random.random([4_000], { chunks: 1_000, seed: 7 })
  ;(await client.persist(a)).release()
  const x = await client.persist(a)
  await x.wait()
  // Once every run has replied, every stale result has been discarded (the
  // release goes out before the metrics request below).
  await until(() => [...client.scheduler.workers.values()].every((w) => w.inflight === 0), 10_000, 'every run to reply')
  t.is(await managed(client), a.nbytes)
  t.is(await client.compute(x.sum()), await client.compute(a.sum()))
})
