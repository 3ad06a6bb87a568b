// Free heap goes back to the OS under memory pressure (src/worker/heap-trim.ts):
// a worker of 1 GiB keeps what a task frees for the next task (its malloc
// thresholds are raised, src/deploy/malloc-env.ts) until its process memory
// passes its target; then its monitor trims the heap, and the memory it
// reports falls to what is live.
import test from 'ava'
import { schedulerWorkers } from 'spillway'
import { cluster, GIB, until } from './cluster-helpers'

const MIB = 2 ** 20

/**
 * Runs on the worker: `n` buffers of 1 MiB (below the raised 8 MiB mmap
 * threshold, so carved from the heap) each followed by a 16 KiB keeper held
 * on globalThis, which stops the freed buffers from merging into the top of
 * the heap (where free() alone would give them back). Process memory before,
 * at the peak, and once the buffers are collected.
 */
function fragmentHeap(n: number) {
  const g = globalThis as any
  const before = process.memoryUsage.rss()
  const big: Buffer[] = []
  g.__heapTrimKeepers = []
  for (let i = 0; i < n; i++) {
    big.push(Buffer.allocUnsafeSlow(1 << 20).fill(i & 255))
    g.__heapTrimKeepers.push(Buffer.allocUnsafeSlow(16 << 10).fill(1))
  }
  const peak = process.memoryUsage.rss()
  big.length = 0
  g.gc()
  return { before, peak, freed: process.memoryUsage.rss() }
}

function dropKeepers() {
  delete (globalThis as any).__heapTrimKeepers
  return true
}

test('a worker past its target gives freed heap back to the OS, and the memory it reports falls', async (t) => {
  const { client } = await cluster(t, { maxWorkers: 1, maxMemGb: 2, reserveMemGb: 1, memoryTarget: 0.3, memorySpill: 0.5, memoryPause: 0.8, memoryTerminate: 0.95 })
  const [w0] = Object.values(await schedulerWorkers(client))
  t.is(w0!.memoryLimit, GIB)
  const target = 0.3 * GIB
  const r = await client.submit(fragmentHeap, [400]).result()
  t.log(`rss before ${Math.round(r.before / MIB)} MiB, peak ${Math.round(r.peak / MIB)} MiB, after the buffers were collected ${Math.round(r.freed / MIB)} MiB`)
  t.true(r.peak - r.before > 300 * MIB, 'the buffers were resident')
  t.true(r.freed > target && r.freed - r.before > 300 * MIB, 'freed, they stay in the heap: nothing gave them back yet')
  let rss = Infinity
  await until(async () => {
    const [w] = Object.values(await schedulerWorkers(client))
    rss = (w!.metrics as any)?.rss ?? Infinity
    return rss < target
  }, 60_000, 'the worker to report memory under its target')
  t.log(`reported after the trim: ${Math.round(rss / MIB)} MiB`)
  t.true(r.freed - rss > 250 * MIB)
  const [w] = Object.values(await schedulerWorkers(client))
  t.is((w!.metrics as any).spillCount, 0, 'nothing was spilled for it')
  t.is(w!.metrics!.status, 'running')
  t.true(await client.submit(dropKeepers, []).result())
})
