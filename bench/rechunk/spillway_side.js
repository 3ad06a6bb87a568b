#!/usr/bin/env node
// spillway's side of bench/rechunk, in a fresh process: 2 workers with
// `--mem` bytes each; a random float64 array of `--n`² in `--from`² chunks
// is persisted (untimed), then rechunked to (`--n`, `--to`) and persisted
// (timed: the P2P rechunk alone). Its sum against the original's checks
// that every value arrived. Prints one JSON line.
'use strict'

const { parseArgs } = require('node:util')
const { random, schedulerWorkers } = require('../..')
const { rssOf, startBenchCluster } = require('../cluster')

const { values: o } = parseArgs({ options: { n: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, mem: { type: 'string' }, workers: { type: 'string', default: '2' } } })
const now = () => performance.now() / 1000

async function main() {
  const [n, from, to, mem] = [o.n, o.from, o.to, o.mem].map(Number)
  const { cluster, client, pids } = await startBenchCluster('rechunk', Number(o.workers), mem)
  const peak = pids.map(() => 0)
  const timer = setInterval(() => pids.forEach((pid, i) => (peak[i] = Math.max(peak[i], rssOf(pid)))), 50)
  try {
    const x = await client.persist(random.random([n, n], { chunks: [from, from], seed: 42 }))
    await x.wait()
    const want = await client.compute(x.sum())
    const t = now()
    const y = await client.persist(x.rechunk([n, to]))
    await y.wait()
    const seconds = now() - t
    const got = await client.compute(y.sum())
    const workers = Object.values(await schedulerWorkers(client))
    console.log(JSON.stringify({ side: 'spillway', seconds, exact: Math.abs(got - want) <= 1e-9 * Math.abs(want), sum: got, peakRss: peak, spillBytesWritten: workers.reduce((a, w) => a + (w.metrics.spillBytesWritten ?? 0), 0) }))
  } finally {
    clearInterval(timer)
    await client.close()
    await cluster.close()
  }
}

main().catch((e) => {
  console.error(e?.stack ?? e)
  process.exit(1)
})
