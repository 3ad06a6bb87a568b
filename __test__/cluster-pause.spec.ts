import test from 'ava'
import { random, schedulerWorkers } from 'spillway'
import { cluster, until } from './cluster-helpers'

test('a worker above its pause threshold takes no new tasks until its memory falls below it', async (t) => {
  // A pause threshold of 2% (~21 MB) is below any Node process's own memory:
  // both workers pause as soon as they watch their memory.
  const { client } = await cluster(t, { memoryTarget: 0.005, memorySpill: 0.01, memoryPause: 0.02 })
  await until(async () => Object.values(await schedulerWorkers(client)).every((w) => w.status === 'paused'), 10_000, 'workers to pause')
  const x = await client.persist(random.random([1_000_000], { chunks: 100_000, seed: 5 }))
  await new Promise((r) => setTimeout(r, 1_000))
  const states = x.keys().map((k) => client.scheduler.tasks.get(k)!.state)
  t.true(states.every((s) => s === 'queued'), `no task was sent to a paused worker: ${states}`)
  await client.scheduler.setThresholds({ target: 0.75, spill: 0.85, pause: 0.92 })
  await x.wait()
  t.true(Math.abs((await client.compute(x.mean())) - 0.5) < 0.01)
  for (const w of Object.values(await schedulerWorkers(client))) {
    t.is(w.status, 'running')
    // The second of waiting above is in each worker's own count of time paused.
    t.true(w.metrics.timings.pausedSeconds >= 0.9, `paused ${w.metrics.timings.pausedSeconds} s`)
    t.true(w.metrics.timings.taskSeconds > 0, `ran tasks for ${w.metrics.timings.taskSeconds} s`)
  }
})
