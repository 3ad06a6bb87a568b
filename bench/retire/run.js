#!/usr/bin/env node
// bench/retire: how long retiring a worker that holds 1 GiB of values (about
// half of it spilled) takes, against losing that worker and recomputing
// what it held. Each repetition starts a fresh 2-worker cluster (1 thread,
// --mem per worker, target 0.6), fills worker A with --mb MiB of values made
// by a task, then either retires A (its values move to B) or SIGKILLs it and
// waits until every value is held again. Sides alternate. Two task costs:
// 'cheap' (the values are only generated, ~10 ms each) and 'costly' (each
// task also computes for --costly-ms, a stand-in for parsing or a model).
//
// The retire side is timed until every value has moved (closeWorkers: false):
// stopping the emptied process is not part of either side.
//
//   node bench/retire/run.js [--mb 1024] [--mem 1] [--reps 3] [--costly-ms 100]
'use strict'
const { parseArgs } = require('node:util')
const { startBenchCluster } = require('../cluster')

const { values } = parseArgs({ options: { mb: { type: 'string', default: '1024' }, mem: { type: 'string', default: '1' }, reps: { type: 'string', default: '3' }, 'costly-ms': { type: 'string', default: '100' } } })
const MB = Number(values.mb)
const MEM = Number(values.mem) * 2 ** 30
const REPS = Number(values.reps)
const COSTLY_MS = Number(values['costly-ms'])
const VALUE_MB = 8

// Incompressible doubles (xorshift), as simulation output's low bytes are: the spilled half travels as frames of about its own size.
function make(seed, mb, busyMs) {
  const a = new Float64Array((mb * 2 ** 20) / 8)
  let x = (seed * 2654435761) >>> 0 || 1
  for (let i = 0; i < a.length; i++) {
    x ^= x << 13
    x >>>= 0
    x ^= x >>> 17
    x ^= x << 5
    x >>>= 0
    a[i] = x / 4294967296
  }
  const end = Date.now() + busyMs
  while (Date.now() < end);
  return a
}

const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]
const spread = (xs) => `${Math.min(...xs).toFixed(2)} / ${median(xs).toFixed(2)} / ${Math.max(...xs).toFixed(2)} s`

async function once(side, busyMs, rep) {
  const { client, cluster } = await startBenchCluster('retire', 2, MEM)
  try {
    const [a] = cluster.workers()
    const n = Math.round(MB / VALUE_MB)
    const fs = Array.from({ length: n }, (_, i) => client.submit(make, [rep * 1000 + i, VALUE_MB, busyMs], { workers: [a], pure: false }))
    await Promise.all(fs.map((f) => f.settled()))
    // Placed on A for the bench only: made again, they may run on either worker.
    for (const f of fs) cluster.scheduler.tasks.get(f.key).restrict = undefined
    await cluster.scheduler.refreshMetrics()
    const m = cluster.scheduler.workers.get(a).metrics
    const spilledShare = m.spilledBytes.memory / m.managedBytes
    const t0 = performance.now()
    if (side === 'retire') {
      const [r] = await client.retireWorkers([a], { closeWorkers: false })
      if (r.recomputed !== 0 || r.moved !== n) throw new Error(`retire moved ${r.moved} of ${n}, recomputed ${r.recomputed}`)
    } else {
      process.kill(cluster.scheduler.workers.get(a).pid, 'SIGKILL')
      while (cluster.scheduler.workers.has(a)) await new Promise((r) => setTimeout(r, 5))
      await cluster.scheduler.waitFor(fs.map((f) => f.key))
    }
    const seconds = (performance.now() - t0) / 1000
    const runs = fs.reduce((s, f) => s + cluster.scheduler.tasks.get(f.key).runs, 0) - n
    return { seconds, spilledShare, reruns: runs }
  } finally {
    await client.close()
  }
}

async function main() {
  console.log(`bench/retire: a worker holding ${MB} MiB (${VALUE_MB} MiB values), workers of ${values.mem} GiB, ${REPS} alternating repetitions per case`)
  for (const [label, busyMs] of [['cheap', 0], ['costly', COSTLY_MS]]) {
    const times = { retire: [], recompute: [] }
    const notes = { spilled: [], reruns: [] }
    for (let r = 0; r < REPS; r++) {
      for (const side of r % 2 ? ['recompute', 'retire'] : ['retire', 'recompute']) {
        const o = await once(side, busyMs, r)
        times[side].push(o.seconds)
        notes.spilled.push(o.spilledShare)
        if (side === 'recompute') notes.reruns.push(o.reruns)
      }
    }
    const ratios = times.retire.map((x, i) => x / times.recompute[i])
    console.log(`  ${label} tasks (${busyMs} ms of compute each), ${(median(notes.spilled) * 100).toFixed(0)}% of the values spilled on A`)
    console.log(`    retire (values moved)      : ${spread(times.retire)} (min / median / max)`)
    console.log(`    lose it and recompute      : ${spread(times.recompute)} (${median(notes.reruns)} tasks rerun)`)
    console.log(`    retire / recompute, paired : ${Math.min(...ratios).toFixed(2)} / ${median(ratios).toFixed(2)} / ${Math.max(...ratios).toFixed(2)}`)
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
