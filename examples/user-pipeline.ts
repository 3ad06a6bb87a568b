// Your own code on a spillway cluster: slices of binary records read and
// parsed into columns by a user module (examples/user-tasks.mjs), persisted
// across two workers whose memory holds two thirds of them, then two
// passes of statistics and one aggregation whose inputs come from every
// worker. The least recently used columns spill to compressed files and come
// back when a pass needs them; the cluster report says how much.
//
//   npx tsx examples/user-pipeline.ts
//   SLICES=12 npx tsx examples/user-pipeline.ts     # smaller and quicker

import { clusterReport, setupClient, wait } from 'spillway'

const SLICES = Number(process.env.SLICES ?? 48)
const RECORDS = Number(process.env.RECORDS ?? 4_194_304) // 64 MiB of columns per slice
const tasks = new URL('./user-tasks.mjs', import.meta.url)
const fn = (name: string) => ({ module: tasks, name })

async function main() {
  const { client, cluster } = await setupClient({ workloadType: 'cpu', maxWorkers: 2, maxMemGb: 3, reserveMemGb: 1, dashboard: false })
  try {
    const start = performance.now()
    const slices = client.map(fn('readSlice'), Array.from({ length: SLICES }, (_, slice) => ({ slice, records: RECORDS })))
    await wait(slices)
    const gib = (SLICES * RECORDS * 16) / 2 ** 30
    console.log(`read and parsed ${SLICES} slices (${gib.toFixed(2)} GiB of columns) in ${((performance.now() - start) / 1000).toFixed(1)} s`)

    let t0 = performance.now()
    const summary = (await client.submit(fn('combineStats'), [client.map(fn('stats'), slices)]).result()) as { mean: number }
    console.log(`pass 1, statistics: ${JSON.stringify(summary)} in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
    t0 = performance.now()
    const deviations = slices.map((s) => client.submit(fn('absDeviation'), [s, summary.mean]))
    const mad = await client.submit(fn('meanAbsDeviation'), [deviations]).result()
    console.log(`pass 2, mean absolute deviation: ${mad} in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
    const t1 = performance.now()
    const perSlice = slices.map((s) => client.submit(fn('exceedances'), [s, 39.5]))
    const counts = (await client.submit(fn('addCounts'), perSlice).result()) as Float64Array
    console.log(`readings above 39.5 per sensor (first 8): ${Array.from(counts.slice(0, 8)).join(', ')} in ${((performance.now() - t1) / 1000).toFixed(1)} s`)

    const report = await clusterReport(client)
    console.log(report.summaryLine())
  } finally {
    await client.close()
    await cluster.close()
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
