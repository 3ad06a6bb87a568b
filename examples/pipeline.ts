// A high-throughput Node pipeline on spillway: stages that persist more data
// than the workers can hold, reduce it where the chunks live, report memory
// and spill from the scheduler after each stage, and retune the spill
// thresholds between stages from what was observed.
//
//   npx tsx examples/pipeline.ts
//   N=12000 npx tsx examples/pipeline.ts     # smaller and quicker
//
// A progress bar (chunk tasks done / total, GiB spilled) is drawn when the
// output is a terminal; piped into a file, only the results are printed.

import { clusterReport, random, setupClient, tuneMemoryThresholds, withProgress, type ChunkedArray, type Client } from 'spillway'

const N = Number(process.env.N ?? 16_000)
const CHUNK = Number(process.env.CHUNK ?? 2_000)

interface StageResult {
  stage: string
  seconds: number
  values: Record<string, number>
  memGib: number
  spillGib: number
  tuned: string
}

/** Runs one stage, then reports and retunes, as a batch job would between steps. */
async function stage(client: Client, name: string, work: () => Promise<Record<string, number>>): Promise<StageResult> {
  const start = performance.now()
  const values = await work()
  const seconds = (performance.now() - start) / 1000
  const report = await clusterReport(client)
  // Much spill → loosen (less disk I/O); little → tighten (more OOM headroom).
  const tuned = await tuneMemoryThresholds(client)
  console.log(`\n▶ ${name}: ${seconds.toFixed(1)} s`)
  for (const [k, v] of Object.entries(values)) console.log(`   ${k} = ${v}`)
  console.log(`   ${report.summaryLine()}`)
  console.log(`   ${tuned.summary()}`)
  return { stage: name, seconds, values, memGib: report.totalMemoryGib, spillGib: report.totalSpillGib, tuned: `target ${Math.round(tuned.after.target * 100)}%, spill ${Math.round(tuned.after.spill * 100)}%` }
}

async function persisted(client: Client, array: ChunkedArray, label: string): Promise<ChunkedArray> {
  const x = await client.persist(array)
  await withProgress(client, x, () => x.wait(), { label })
  return x
}

async function main() {
  // Two workers of ~1 GiB each: the data below does not fit, so they spill.
  // adaptiveMemory tightens the thresholds once at start-up.
  const { client, cluster } = await setupClient({
    workloadType: 'cpu',
    maxWorkers: 2,
    maxMemGb: 3,
    reserveMemGb: 1,
    dashboard: false,
    spillCompression: 'auto',
    adaptiveMemory: true,
  })
  const results: StageResult[] = []
  try {
    // Stage 1: ingest readings (float64) and keep them for later stages.
    let readings!: ChunkedArray
    results.push(
      await stage(client, 'ingest + statistics', async () => {
        readings = await persisted(client, random.random([N, N], { chunks: [CHUNK, CHUNK], seed: 7 }), 'ingest')
        return {
          mean: await client.compute(readings.mean()),
          std: await client.compute(readings.std()),
          min: await client.compute(readings.min()),
          max: await client.compute(readings.max()),
        }
      }),
    )

    // Stage 2: event counts (small integers, which compress well when spilled),
    // computed while the readings are still held.
    let counts!: ChunkedArray
    results.push(
      await stage(client, 'counts', async () => {
        counts = await persisted(client, random.randint(0, 10, [N, N], { chunks: [CHUNK, CHUNK], seed: 8 }), 'counts')
        return { total: await client.compute(counts.sum()), mean: await client.compute(counts.mean()) }
      }),
    )

    // Stage 3: the readings are no longer needed: release them, then stream a
    // larger array that is never persisted — each chunk is generated, reduced
    // and freed, so it never needs the memory it would take to hold it.
    readings.release()
    counts.release()
    const stream = random.random([N * 2, N], { chunks: [CHUNK, CHUNK], seed: 9 })
    results.push(await stage(client, 'stream (not persisted)', async () => ({ mean: await client.compute(stream.mean(), { progress: true }) })))
  } finally {
    await client.close()
    await cluster.close()
  }

  console.log(`\n${'stage'.padEnd(24)}${'time (s)'.padStart(9)}${'mem GiB'.padStart(9)}${'spill GiB'.padStart(11)}  thresholds after`)
  for (const r of results) {
    console.log(`${r.stage.padEnd(24)}${r.seconds.toFixed(1).padStart(9)}${r.memGib.toFixed(2).padStart(9)}${r.spillGib.toFixed(2).padStart(11)}  ${r.tuned}`)
  }
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
