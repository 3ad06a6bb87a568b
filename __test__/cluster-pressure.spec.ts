import test from 'ava'
import { clusterReport, random, schedulerWorkers, tuneMemoryThresholds, workerInMemoryBytes, workerSpillBytes, monitor, timelineChart } from 'spillway'
import { bytesOnDisk, cluster, GIB } from './cluster-helpers'
import { settle } from './dashboard-helpers'

test('pressure test: 3.2 GB on 2 GiB of workers spills the rest, keeps memory near target, and the mean is right', async (t) => {
  const { client, tempDir } = await cluster(t)
  const nthreads = client.nthreads()
  t.is(Object.keys(nthreads).length, 2)
  const before = await schedulerWorkers(client)
  for (const w of Object.values(before)) {
    t.is(w.memoryLimit, GIB, '1.00 GiB limit each, as the recipe')
    t.is(w.nthreads, 1)
  }
  const { value: mean, timeline } = await monitor(
    client,
    async () => {
      const x = await client.persist(random.random([20_000, 20_000], { chunks: [2_000, 2_000], seed: 1 }))
      await x.wait()
      return client.compute(x.mean())
    },
    { intervalMs: 250 },
  )
  t.true(Math.abs(mean - 0.5) < 1e-3, `mean ${mean}`)
  // The reduction read spilled chunks back; a worker left above its spill
  // threshold goes on spilling briefly. Compare figures once it has stopped.
  await settle(client)
  const workers = await schedulerWorkers(client)
  let inMemory = 0
  let spilled = 0
  for (const [addr, w] of Object.entries(workers)) {
    const mem = workerInMemoryBytes(w.metrics)
    const target = 0.75 * w.memoryLimit
    t.true(mem <= target + 32e6, `${addr} holds ${mem} in memory, target ${target}`)
    t.true(mem >= 0.4 * w.memoryLimit, `${addr} keeps a working set in memory (${mem})`)
    t.true(workerSpillBytes(w.metrics) > 0.5 * GIB, `${addr} spilled`)
    inMemory += mem
    spilled += workerSpillBytes(w.metrics)
  }
  const managed = Object.values(workers).reduce((s, w) => s + (w.metrics as any).managedBytes, 0)
  t.is(managed, 20_000 * 20_000 * 8, 'every chunk is held, in memory or on disk')
  // Random floats do not compress: what is on disk is the spilled data itself.
  t.is(bytesOnDisk(tempDir).bytes, spilled, 'the scheduler’s spill figure is what the files hold')
  const report = await clusterReport(client)
  t.is(report.workers, 2)
  t.regex(report.summaryLine(), /^workers=2 \| mem=0\.\d\d GiB\/max \| spill=1\.\d\d GiB$/)
  t.true(Math.abs(report.totalSpillGib - spilled / GIB) < 1e-9)
  t.true(Math.abs(report.totalMemoryGib - inMemory / GIB) < 1e-9)
  t.true(report.totalTasks >= 100)
  t.true(timeline.length >= 2)
  t.true(Math.max(...timeline.map((p) => p.spillGib)) > 1)
  const svg = timelineChart(timeline)
  t.regex(svg, /^<\?xml[\s\S]*<svg[\s\S]*data-series="memory"[\s\S]*data-series="spill"[\s\S]*<\/svg>\s*$/)

  // Tightening moves the target on every worker, and spilling follows at once.
  const tuned = await tuneMemoryThresholds(client, { strategy: 'tighten', tightenBy: 0.15 })
  t.regex(tuned.summary(), /^Memory thresholds adjusted on 2 worker\(s\): target 75%→60%, spill 85%→70% \(/)
  const after = await schedulerWorkers(client)
  for (const [addr, w] of Object.entries(after)) {
    t.is(w.thresholds.target, 0.6)
    t.is(w.thresholds.spill, 0.7)
    // A chunk another spill is still writing counts as in memory until its file is complete.
    t.true(workerInMemoryBytes(w.metrics) <= 0.6 * w.memoryLimit + 32e6, `${addr} spilled down to the new target`)
  }
  const auto = await tuneMemoryThresholds(client)
  t.regex(auto.summary(), /target 60%→65%, spill 70%→75% \(high spill \(\d\.\d\d GiB ≥ 0\.50 GiB threshold\); loosened thresholds to reduce disk write amplification\)/)
})

test('adaptiveMemory tightens once at start-up, before anything has spilled', async (t) => {
  const { client } = await cluster(t, { adaptiveMemory: true })
  for (const w of Object.values(await schedulerWorkers(client))) {
    t.is(w.thresholds.target, 0.7)
    t.is(w.thresholds.spill, 0.8)
  }
})
