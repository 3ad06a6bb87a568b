#!/usr/bin/env node
// spillway's side of bench/shuffle: one case per invocation, on a fresh
// cluster of 2 workers with `--mem` bytes each (LocalCluster directly:
// setupClient keeps every worker at 1 GiB or more). Start-up is timed apart.
// Each worker's resident set is read from /proc/<pid>/status every 50 ms
// (and from the heartbeat metrics); prints one JSON line.
//
//   node spillway_side.js --case groupby|join|trivial|wordcount --dir DATA --mem BYTES
//                         [--blocksize BYTES] [--npartitions N] [--split-out N]
'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { parseArgs } = require('node:util')
const { bag, schedulerWorkers, workerSpillBytes } = require('../..')
const { rssOf, startBenchCluster } = require('../cluster')

const { values: o } = parseArgs({
  options: {
    case: { type: 'string' },
    dir: { type: 'string' },
    mem: { type: 'string' },
    blocksize: { type: 'string', default: String(16 << 20) },
    npartitions: { type: 'string' },
    'split-out': { type: 'string' },
    workers: { type: 'string', default: '2' },
  },
})
const now = () => performance.now() / 1000
/** CPU seconds (user + system) a process has used so far, from /proc (0 where it cannot be read). */
const cpuOf = (pid) => {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return (Number(f[11]) + Number(f[12])) / 100
  } catch {
    return 0
  }
}

// Task functions travel as source: no closures.
const parseLeft = (line) => {
  const a = line.indexOf(',')
  const b = line.indexOf(',', a + 1)
  return { key: line.slice(0, a), value: Number(line.slice(a + 1, b)), payload: line.slice(b + 1) }
}
const parseRight = (line) => {
  const a = line.indexOf(',')
  const b = line.indexOf(',', a + 1)
  return { key: line.slice(0, a), attr: Number(line.slice(a + 1, b)), payload: line.slice(b + 1) }
}
const notHeader = (line) => !line.startsWith('key,')
/** [n, total] of a bag of numbers, as one reduction (no item comes to the client). */
const countSum = (items) => {
  let n = 0
  let t = 0
  for (const x of items) {
    n++
    t += x
  }
  return [n, t]
}
const addPairs = (parts) => parts.reduce((a, b) => [a[0] + b[0], a[1] + b[1]], [0, 0])

async function main() {
  const mem = Number(o.mem)
  const nWorkers = Number(o.workers)
  const blocksize = Number(o.blocksize)
  let t = now()
  const { cluster, client, pids } = await startBenchCluster('shuffle', nWorkers, mem)
  const startup = now() - t
  const peak = pids.map(() => 0)
  const beatPeak = pids.map(() => 0)
  const sample = () => {
    pids.forEach((pid, i) => {
      const r = rssOf(pid)
      if (r > peak[i]) peak[i] = r
    })
    ;[...client.scheduler.workers.values()].forEach((w, i) => {
      if ((w.metrics?.rss ?? 0) > (beatPeak[i] ?? 0)) beatPeak[i] = w.metrics.rss
    })
  }
  const timer = setInterval(sample, 50)
  let out
  try {
    const dir = o.dir
    const text = (sub) => bag.readText(path.join(dir, sub, '*'), { blocksize })
    const left = () => text('left').filter(notHeader).map(parseLeft)
    const np = o.npartitions ? Number(o.npartitions) : undefined
    let answer
    const cpu0 = pids.map(cpuOf)
    t = now()
    if (o.case === 'groupby') {
      const l = left()
      const sizes = l.groupBy('key', { npartitions: np ?? l.npartitions }).map((g) => g[1].length)
      answer = await client.compute(sizes.reduction(countSum, addPairs))
    } else if (o.case === 'join') {
      const l = left()
      const r = text('right').filter(notHeader).map(parseRight)
      answer = await client.compute(l.join(r, 'key', 'key', { npartitions: np ?? l.npartitions }).count())
    } else if (o.case === 'trivial') {
      // Per-item work as small as it gets: the line is the item, its key the text before the first comma.
      const lines = text('left')
      answer = await client.compute(lines.shuffle((line) => line.slice(0, line.indexOf(',')), { npartitions: np ?? lines.npartitions }).count())
    } else if (o.case === 'wordcount') {
      const words = text('text').flatMap((line) => line.split(' '))
      const freq = words.frequencies({ splitOut: Number(o['split-out'] ?? words.npartitions) })
      answer = await client.compute(freq.map((p) => p[1]).reduction(countSum, addPairs))
    } else throw new Error(`unknown case ${o.case}`)
    const seconds = now() - t
    const workerCpuSeconds = pids.reduce((a, pid, i) => a + cpuOf(pid) - cpu0[i], 0)
    sample()
    const workers = Object.values(await schedulerWorkers(client))
    const sum = (f) => workers.reduce((a, w) => a + (f(w.metrics) || 0), 0)
    out = {
      side: 'spillway',
      pid: process.pid,
      case: o.case,
      seconds,
      startupSeconds: startup,
      workerCpuSeconds,
      answer,
      memoryLimit: mem,
      workers: nWorkers,
      peakRss: peak,
      peakRssHeartbeat: beatPeak,
      spillBytesWritten: sum((m) => m.spillBytesWritten),
      spilledBytesAtEnd: sum(workerSpillBytes),
      spillSeconds: sum((m) => m.spillSeconds),
      unspillSeconds: sum((m) => m.unspillSeconds),
      taskSeconds: sum((m) => m.timings?.taskSeconds),
      pausedSeconds: sum((m) => m.timings?.pausedSeconds),
      restarts: workers.map((w) => w.restarts ?? w.metrics?.restarts).filter((x) => x !== undefined),
    }
  } finally {
    clearInterval(timer)
    await client.close()
    await cluster.close()
  }
  console.log(JSON.stringify(out))
}

main().catch((e) => {
  console.error(e?.stack ?? e)
  process.exit(1)
})
