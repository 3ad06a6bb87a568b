#!/usr/bin/env node
// spillway's side of bench/bag, one case per invocation on a fresh 2-worker
// cluster (1 GiB each, as bench/dask). Cluster start-up is timed apart from
// the workload, which includes planning the bag (globbing, stat'ing files).
// Prints one JSON line.
//
//   node spillway_side.js --case text|trivial|ndjson|steps|foldby --manifest <path> [--blocksize 64MiB] [--root DIR]
//
//   text     readText(glob).filter(line.includes('ERROR')).count()
//   trivial  readText(glob).filter(() => true).count()       (against the floor)
//   ndjson   readText(file).map(JSON.parse).foldBy('user', acc + e.bytes, 0, { combine: a + b })
//   steps    readText(glob).map(line.length).filter(n odd).count()      (the per-item path: cheap
//   foldby   readText(glob).foldBy(line.length % 16, acc + 1, 0)         steps, many items)
//   files    readText(many small source files).map(line => /\bstatic\b/.test(line)).frequencies():
//            two counts (lines, and lines that match) in one pass; --glob G picks the files
//            (the real corpus of --corpus DIR), else the manifest's generated ones
//
// --root names the spillway package to load (default this checkout), so
// bench/bag/pertask.js can run a build from before a change against this one.
'use strict'

const fs = require('node:fs')
const { treeCpuSeconds } = require('./cpu')

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : dflt
}
const now = () => Number(process.hrtime.bigint()) / 1e9

async function main() {
  const { bag, setupClient } = require(arg('--root', require('node:path').join(__dirname, '..', '..')))
  const c = arg('--case')
  const m = arg('--manifest') ? JSON.parse(fs.readFileSync(arg('--manifest'), 'utf8')) : {}
  const blocksize = arg('--blocksize', '64 MiB')
  let t = now()
  const { client, cluster } = await setupClient({ workloadType: 'cpu', maxWorkers: 2, maxMemGb: 3, reserveMemGb: 1, dashboard: false, silenceLogs: true })
  let out
  try {
    const startup = now() - t
    t = now()
    // This process and its workers (their read-ahead threads included).
    const cpu0 = treeCpuSeconds()
    let answer
    let npartitions
    if (c === 'text' || c === 'trivial') {
      const lines = bag.readText(m.text.glob, { blocksize })
      npartitions = lines.npartitions
      const kept = c === 'text' ? lines.filter((line) => line.includes('ERROR')) : lines.filter(() => true)
      answer = await client.compute(kept.count())
    } else if (c === 'steps') {
      const lines = bag.readText(m.text.glob, { blocksize })
      npartitions = lines.npartitions
      answer = await client.compute(lines.map((line) => line.length).filter((n) => n % 2 === 1).count())
    } else if (c === 'foldby') {
      const lines = bag.readText(m.text.glob, { blocksize })
      npartitions = lines.npartitions
      const byLength = await client.compute(lines.foldBy((line) => line.length % 16, (acc) => acc + 1, 0, { combine: (a, b) => a + b }))
      answer = byLength.sort((a, b) => a[0] - b[0])
    } else if (c === 'files') {
      const lines = bag.readText(arg('--glob', m.files?.glob), { blocksize })
      npartitions = lines.npartitions
      const freq = await client.compute(lines.map((line) => /\bstatic\b/.test(line)).frequencies())
      const byValue = new Map(freq)
      answer = { lines: (byValue.get(true) ?? 0) + (byValue.get(false) ?? 0), matches: byValue.get(true) ?? 0 }
    } else if (c === 'ndjson') {
      const events = bag.readText(m.ndjson.path, { blocksize }).map(JSON.parse)
      npartitions = events.npartitions
      const byUser = await client.compute(events.foldBy('user', (acc, e) => acc + e.bytes, 0, { combine: (a, b) => a + b }))
      answer = { users: byUser.length, total: byUser.reduce((a, [, v]) => a + v, 0) }
    } else throw new Error(`unknown --case ${c}`)
    const seconds = now() - t
    const cpuSeconds = cpu0 === undefined ? undefined : treeCpuSeconds() - cpu0
    let peakRss = 0
    for (const w of client.scheduler.workers.values()) peakRss = Math.max(peakRss, w.metrics?.rss ?? 0)
    out = { side: 'spillway', case: c, seconds, cpuSeconds, startupSeconds: startup, answer, npartitions, workerRssBytes: peakRss }
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
