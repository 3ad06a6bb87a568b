// Memory Management & Compression — the dask_setup recipe, with spillway.
//
// How spillway sizes worker memory, when workers spill to disk, how to
// measure spilling, and what spill compression buys you.
//
//   npx tsx examples/memory-management.ts            # the recipe's 20000×20000 arrays
//   N=12000 CHUNK=1500 npx tsx examples/memory-management.ts   # smaller and quicker
//
// Key learning points
//   • how spillway divides memory between the OS reserve and the workers
//   • memory spilling thresholds and when they trigger
//   • measuring real spill volume from the scheduler (not disk usage)
//   • choosing a spill compression codec that is actually compiled in
//   • letting tuneMemoryThresholds() adjust thresholds from observed spilling
//
// `spillway demo` runs the same sections with a progress bar and writes the
// chart and every figure to a directory.

import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  availableCodecs,
  type Client,
  clusterReport,
  detectResources,
  GIB,
  monitor,
  random,
  schedulerWorkers,
  SetupConfig,
  setupClient,
  timelineChart,
  tuneMemoryThresholds,
  workerInMemoryBytes,
  workerSpillBytes,
} from 'spillway'

const N = Number(process.env.N ?? 20_000)
const CHUNK = Number(process.env.CHUNK ?? 2_000)

async function main() {
  console.log('🚀 Setup complete!')

  // ── System memory information ─────────────────────────────────────────────
  // The machine's memory and cores, after cgroup and PBS/SLURM limits: what
  // setupClient sizes against. (`npx spillway info` prints this and more.)
  console.log('\n💻 SYSTEM MEMORY ANALYSIS')
  console.log('='.repeat(50))
  const r = await detectResources()
  const gb = (b: number) => (b / GIB).toFixed(2)
  console.log('Physical Memory:')
  console.log(`   Total: ${gb(r.totalMemoryBytes)} GB`)
  console.log(`   Available: ${gb(r.availableMemoryBytes)} GB`)
  console.log(`   Used: ${gb(r.usedMemoryBytes)} GB (${((100 * r.usedMemoryBytes) / r.totalMemoryBytes).toFixed(1)}%)`)
  console.log(`   Free: ${gb(r.freeMemoryBytes)} GB`)
  console.log('\nSwap Memory:')
  console.log(`   Total: ${gb(r.swapTotalBytes)} GB`)
  console.log(`   Used: ${gb(r.swapUsedBytes)} GB`)
  console.log(`   Free: ${gb(r.swapFreeBytes)} GB`)
  console.log('\nCPU Information:')
  console.log(`   Physical cores: ${r.physicalCores}`)
  console.log(`   Logical cores: ${r.logicalCores}`)
  // HPC variables: spill goes under $PBS_JOBFS when set, else $TMPDIR.
  console.log('\n🖥️  HPC ENVIRONMENT VARIABLES:')
  const vars = Object.entries(r.hpcVars)
  if (vars.length === 0) console.log('   No HPC environment variables detected (running locally)')
  for (const [name, value] of vars) console.log(`   ${name}: ${value}`)
  console.log('\n✅ System analysis complete')

  // ── How spillway sizes worker memory ──────────────────────────────────────
  // usable     = min(maxMemGb, node RAM) − reserveMemGb
  // per-worker = usable / nWorkers
  // reserveMemGb is held back for the OS, page cache and filesystem clients;
  // unset, it is 20% of RAM clamped to 4–50 GB. A per-worker share under
  // 1 GiB starts fewer workers rather than over-committing the node.
  //
  // Each worker then acts on four thresholds, fractions of its limit:
  //   memoryTarget    0.75  spill least-recently-used chunks to disk
  //   memorySpill     0.85  spill on process memory, not just tracked data
  //   memoryPause     0.92  take no new tasks on this worker
  //   memoryTerminate 0.98  the nanny kills and restarts the worker

  // ── Measuring memory and spill ────────────────────────────────────────────
  // The scheduler tracks what each worker holds and how much of it is
  // spilled; workerInMemoryBytes() and workerSpillBytes() read the two figures
  // from a worker's heartbeat metrics. The free space of $TMPDIR does not
  // measure spilling: it reports how full the whole filesystem is.
  async function clusterMemorySnapshot(client: Client) {
    const workers = await schedulerWorkers(client) // every worker
    const ws = Object.values(workers)
    return {
      workers: ws.length,
      memoryGib: ws.reduce((s, w) => s + workerInMemoryBytes(w.metrics), 0) / GIB,
      spillGib: ws.reduce((s, w) => s + workerSpillBytes(w.metrics), 0) / GIB,
    }
  }
  // monitor(client, fn, { description }) samples the same figures while fn
  // runs and prints "Time: … | peak memory … GiB | peak spill … GiB".
  console.log('\n✅ Memory monitoring functions defined')

  // ── Memory pressure test ──────────────────────────────────────────────────
  // Cap spillway at 3 GB and reserve 1 GB of it: 2 workers with ~1 GiB each.
  // Then hold a 3.2 GB array with persist(), more than the workers have, so
  // they must spill.
  const PRESSURE_CONFIG = {
    workloadType: 'cpu',
    maxWorkers: 2,
    maxMemGb: 3, // cap spillway's total memory...
    reserveMemGb: 1, // ...and reserve 1 GB of it, leaving ~1 GiB per worker
    dashboard: false,
  } as const

  let { client, cluster, tempDir } = await setupClient(PRESSURE_CONFIG)
  const first = Object.values(await schedulerWorkers(client))[0]
  console.log(`✅ ${Object.keys(client.nthreads()).length} workers, ${(first.memoryLimit / GIB).toFixed(2)} GiB limit each`)
  console.log(`   Spill directory: ${tempDir}`)

  // Persist an n×n float64 array (3.2 GB at the default size), then reduce it.
  const makePressureComputation = (n = N, chunk = CHUNK) => async () => {
    const x = await client.persist(random.random([n, n], { chunks: [chunk, chunk] }))
    await x.wait() // everything is now held by the workers, in memory or on disk
    return client.compute(x.mean())
  }

  const { value: result, timeline } = await monitor(client, makePressureComputation(), {
    description: `Persist ${((N * N * 8) / 1e9).toFixed(1)} GB on ~2 GB of workers`,
  })
  console.log(`\n✅ Result: ${result.toFixed(6)}`)

  // ── Memory timeline ───────────────────────────────────────────────────────
  // clusterReport() gives the same headline numbers without monitoring: call
  // it before closing the client, e.g. at the end of a batch job.
  const report = await clusterReport(client)
  console.log(report.summaryLine())
  console.log(`Spilled to disk: ${report.totalSpillGib.toFixed(2)} GiB`)

  // ── Memory usage visualization ────────────────────────────────────────────
  // Managed memory plateaus near the workers' target, while spill keeps
  // growing to absorb the rest. timelineChart() draws it as a standalone SVG.
  const chart = join(mkdtempSync(join(tmpdir(), 'spillway-example-')), 'memory-timeline.svg')
  writeFileSync(chart, timelineChart(timeline))
  console.log(`📈 Chart: ${chart}`)
  for (const p of timeline) console.log(`${p.t.toFixed(1).padStart(5)}s  memory=${p.memoryGib.toFixed(2)} GiB  spill=${p.spillGib.toFixed(2)} GiB`)

  await client.close()
  await cluster.close()

  // ── Compression algorithm comparison ──────────────────────────────────────
  // Spill compression is set with new SetupConfig({ spillCompression }).
  // spillway compiles its codecs in, and an unknown name is rejected when the
  // config is made (ERR_SPILLWAY_INVALID_CONFIG, listing the valid ones) —
  // never a worker that fails to start. Ask what this build has:
  //   'auto'   lz4: fast, the safe default
  //   'lz4' / 'snappy'  fast
  //   'zstd'   better ratio, more CPU
  //   'zlib'   good ratio, slow
  //   'none'   no compression
  // Small integers compress well, so the codecs' differences are visible.
  // (Random floats barely compress at all.)
  const available = availableCodecs()
  console.log(`Codecs available here: ${JSON.stringify(available)}`)

  async function compressiblePressure(c: Client) {
    const x = await c.persist(random.randint(0, 10, [N, N], { chunks: [CHUNK, CHUNK] }))
    await x.wait()
    return c.compute(x.sum())
  }

  const compressionResults: Record<string, { seconds: number; workers: number; memoryGib: number; spillGib: number }> = {}
  // zlib is left out as in the recipe: it is several times slower than the
  // others on this workload (`spillway demo` includes it; measure it yourself).
  for (const codec of ['auto', ...available.filter((c) => c !== 'zlib')]) {
    const config = new SetupConfig({ ...PRESSURE_CONFIG, spillCompression: codec })
    ;({ client, cluster } = await setupClient({ config }))
    const start = performance.now()
    await compressiblePressure(client)
    const seconds = (performance.now() - start) / 1000
    compressionResults[codec] = { seconds, ...(await clusterMemorySnapshot(client)) }
    await client.close()
    await cluster.close()
  }

  // ── Compression results ───────────────────────────────────────────────────
  // The spill column is bytes on disk, after compression.
  console.log(`${'codec'.padEnd(8)}${'time (s)'.padStart(10)}${'spilled to disk (GiB)'.padStart(24)}`)
  console.log('-'.repeat(42))
  for (const [codec, res] of Object.entries(compressionResults).sort((a, b) => a[1].seconds - b[1].seconds)) {
    console.log(`${codec.padEnd(8)}${res.seconds.toFixed(1).padStart(10)}${res.spillGib.toFixed(2).padStart(24)}`)
  }

  // ── Memory management best practices ──────────────────────────────────────
  // Compression: keep 'auto' unless you measured better (`npx spillway bench
  //   codecs --file your-data`); on $PBS_JOBFS (local SSD) spill I/O is cheap,
  //   so prefer a fast codec; on a shared filesystem a stronger one (zstd)
  //   lightens its load.
  // Thresholds: workers killed or restarting → lower memoryTarget /
  //   memorySpill, or give each worker more memory. Heavy spilling on a node
  //   with free RAM → you reserve too much: lower reserveMemGb.
  // Worker count: memory per worker is usable / nWorkers. If single tasks need
  //   more, use fewer workers (maxWorkers) or smaller chunks (recommendChunks()).
  // Storage: on PBS, spill goes to $PBS_JOBFS; request enough of it
  //   (#PBS -l jobfs=...) to cover the expected peak spill.

  // Conservative settings for a memory-constrained node (also built in as
  // SetupConfig.profile('conservative')).
  const conservative = new SetupConfig({
    workloadType: 'cpu',
    reserveMemGb: 4,
    memoryTarget: 0.6,
    memorySpill: 0.7,
    memoryPause: 0.85,
    memoryTerminate: 0.95,
    spillCompression: 'auto',
  })
  for (const field of ['reserveMemGb', 'memoryTarget', 'memorySpill', 'memoryPause', 'memoryTerminate', 'spillCompression'] as const) {
    console.log(`${field.padEnd(18)} ${conservative[field]}`)
  }

  // ── Let spillway tune the thresholds ──────────────────────────────────────
  // tuneMemoryThresholds() reads the spill figures from a running cluster and
  // moves memoryTarget / memorySpill on every worker: it tightens them after
  // little spilling (more OOM headroom) and loosens them after a lot (less disk
  // I/O). setupClient({ adaptiveMemory: true }) runs it once at start-up,
  // before anything has spilled, so it always tightens; call it yourself
  // between pipeline stages to react to real spill.
  ;({ client, cluster } = await setupClient(PRESSURE_CONFIG))
  await makePressureComputation()()
  const tuned = await tuneMemoryThresholds(client)
  console.log(tuned.summary())
  await client.close()
  await cluster.close()

  // ── Conclusion ────────────────────────────────────────────────────────────
  // 1. Per-worker memory is (min(maxMemGb, RAM) − reserveMemGb) / nWorkers;
  //    the reserve comes out of the workers' share.
  // 2. Thresholds decide when workers spill, pause and are killed; lower them
  //    to spill earlier.
  // 3. Measure spill from the scheduler (clusterReport(), workerSpillBytes()),
  //    not from disk usage.
  // 4. Only compiled-in codecs are accepted, and 'auto' always is.
  // 5. Call tuneMemoryThresholds() between stages to adjust to observed spill.
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
