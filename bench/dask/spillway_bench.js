#!/usr/bin/env node
// spillway's side of bench/dask: the same workloads as dask_bench.py with the
// recipe's pressure settings (2 workers, 1 GiB each, thresholds
// 0.75/0.85/0.92/0.98, spill compression per case). One case per invocation,
// on a fresh cluster; start-up is timed apart from the workload. Prints one
// JSON line on stdout, in dask_bench.py's shape.
//
//   node spillway_bench.js --case random|randint|tasks [--codec lz4] [--n 20000]
//                          [--chunk 2000] [--ntasks 10000] [--interval 0.2]
//
// Workloads (timed: persist + wait + reduction, as the recipe's):
//   random   random.random([n, n], { chunks }) persisted, waited, .mean()
//   randint  random.randint(0, 10, [n, n], { chunks }) persisted, waited, .sum()
//   tasks    random.random([ntasks], { chunks: 1 }) persisted, waited, .sum():
//            ntasks one-value generation tasks and ntasks reductions where the
//            chunks live, against Dask's da.random.random(ntasks, chunks=1).
'use strict'

const { setupClient, random, schedulerWorkers, wait, workerInMemoryBytes, workerSpillBytes } = require('../..')

function parseArgs(argv) {
  const o = { case: undefined, codec: 'auto', n: 20_000, chunk: 2_000, ntasks: 10_000, interval: 0.2, slices: 48, records: 4_194_304 }
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i].replace(/^--/, '')
    if (!(k in o)) throw new Error(`unknown flag ${argv[i]}`)
    const v = argv[++i]
    o[k] = typeof o[k] === 'number' ? Number(v) : v
  }
  if (!['random', 'randint', 'tasks', 'submit', 'map', 'pipeline'].includes(o.case)) throw new Error('--case must be random, randint, tasks, submit, map or pipeline')
  return o
}

const now = () => Number(process.hrtime.bigint()) / 1e9

/** The recipe's monitor: reads the scheduler's heartbeat metrics every `interval` s. */
function startMonitor(client, interval) {
  const samples = []
  const t0 = now()
  const sample = () => {
    let memory = 0
    let spill = 0
    let rss = 0
    for (const w of client.scheduler.workers.values()) {
      memory += workerInMemoryBytes(w.metrics)
      spill += workerSpillBytes(w.metrics)
      rss += w.metrics?.rss ?? 0
    }
    samples.push({ t: now() - t0, memory, spill, rss })
  }
  sample()
  const timer = setInterval(sample, interval * 1000)
  return {
    samples,
    sample,
    stop() {
      clearInterval(timer)
      sample()
    },
  }
}

function makeArray(o) {
  if (o.case === 'random') return random.random([o.n, o.n], { chunks: [o.chunk, o.chunk], seed: 1 })
  if (o.case === 'randint') return random.randint(0, 10, [o.n, o.n], { chunks: [o.chunk, o.chunk], seed: 2 })
  return random.random([o.ntasks], { chunks: 1, seed: 3 })
}

async function main() {
  const o = parseArgs(process.argv.slice(2))
  let t = now()
  const { client, cluster } = await setupClient({
    workloadType: 'cpu',
    maxWorkers: 2,
    maxMemGb: 3,
    reserveMemGb: 1,
    dashboard: false,
    silenceLogs: true,
    spillCompression: o.codec,
  })
  let out
  try {
    const startup = now() - t
    const mon = startMonitor(client, o.interval)
    t = now()
    let x
    let answer
    let t1
    if (o.case === 'pipeline') {
      // (e): examples/user-pipeline.ts's work: read and parse slices (1.5x the
      // workers' memory), persist, two passes of statistics, one aggregation.
      const fn = (name) => ({ module: require('node:path').join(__dirname, '..', '..', 'examples', 'user-tasks.mjs'), name })
      const slices = client.map(fn('readSlice'), Array.from({ length: o.slices }, (_, slice) => ({ slice, records: o.records })))
      await wait(slices)
      t1 = now()
      const summary = await client.submit(fn('combineStats'), [client.map(fn('stats'), slices)]).result()
      const mad = await client.submit(fn('meanAbsDeviation'), [slices.map((s) => client.submit(fn('absDeviation'), [s, summary.mean]))]).result()
      const counts = await client.submit(fn('addCounts'), slices.map((s) => client.submit(fn('exceedances'), [s, 39.5]))).result()
      if (!(mad > 0) || counts.length !== 64) throw new Error('pipeline gave no answer')
      answer = summary.n
      x = { release: () => slices.forEach((f) => f.release()) }
    } else if (o.case === 'submit' || o.case === 'map') {
      // (d): ntasks tiny user tasks, submitted one call each (or one map), then gathered.
      const inc = (i) => i + 1
      const fs = o.case === 'submit' ? Array.from({ length: o.ntasks }, (_, i) => client.submit(inc, [i])) : client.map(inc, Array.from({ length: o.ntasks }, (_, i) => i))
      t1 = now()
      answer = (await client.gather(fs)).reduce((a, b) => a + b, 0)
      x = { release: () => fs.forEach((f) => f.release()) }
    } else {
      x = await client.persist(makeArray(o))
      await x.wait()
      t1 = now()
      answer = await client.compute(o.case === 'random' ? x.mean() : x.sum())
    }
    const t2 = now()
    mon.stop()
    // Fresh metrics from every worker, with the array still held.
    const workers = Object.values(await schedulerWorkers(client))
    mon.sample()
    const sum = (f) => workers.reduce((a, w) => a + (f(w.metrics) || 0), 0)
    out = {
      side: 'spillway',
      case: o.case,
      codec: o.codec,
      n: o.n,
      chunk: o.chunk,
      ntasks: o.ntasks,
      seconds: t2 - t,
      persistSeconds: t1 - t,
      reduceSeconds: t2 - t1,
      startupSeconds: startup,
      answer,
      peakMemoryBytes: Math.max(...mon.samples.map((s) => s.memory)),
      peakSpillBytes: Math.max(...mon.samples.map((s) => s.spill)),
      peakRssBytes: Math.max(...mon.samples.map((s) => s.rss)),
      finalMemoryBytes: sum(workerInMemoryBytes),
      spilledBytes: sum(workerSpillBytes),
      spilledMemoryBytes: sum((m) => m.spilledBytes?.memory),
      samples: mon.samples.length,
      workers: workers.length,
      memoryLimit: workers[0]?.metrics.memoryLimit,
      thresholds: workers[0]?.metrics.thresholds,
      timings: {
        // Summed over workers; the workers run in parallel, so these add up
        // to about twice the wall time they cover.
        spillSeconds: sum((m) => m.spillSeconds),
        unspillSeconds: sum((m) => m.unspillSeconds),
        spillCount: sum((m) => m.spillCount),
        unspillCount: sum((m) => m.unspillCount),
        spillBytesWritten: sum((m) => m.spillBytesWritten),
        unspillBytesRead: sum((m) => m.unspillBytesRead),
        tasksDone: sum((m) => m.taskCounts?.done),
        taskSeconds: sum((m) => m.timings?.taskSeconds),
        pausedSeconds: sum((m) => m.timings?.pausedSeconds),
      },
      versions: { node: process.version, spillway: require('../../package.json').version },
    }
    x.release()
  } finally {
    await client.close()
    await cluster.close()
  }
  console.log(JSON.stringify(out))
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
