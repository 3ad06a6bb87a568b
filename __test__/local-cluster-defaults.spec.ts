// LocalCluster.start as Dask's LocalCluster is used: what is left out takes
// setupClient's defaults. Without thresholds a shuffle's room check once
// found "NaN GiB" of room and refused every shuffle.
import test from 'ava'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bag, Client, LocalCluster } from 'spillway'

test('a LocalCluster started without thresholds takes the defaults, and a shuffle runs on it', async (t) => {
  t.timeout(120_000)
  const spillDir = mkdtempSync(join(tmpdir(), 'spillway-defaults-'))
  const lc = await LocalCluster.start({ nWorkers: 2, threadsPerWorker: 1, memoryLimit: 2 ** 30, spillDir, codec: 'lz4' })
  const client = new Client(lc, { silenceLogs: true })
  t.teardown(async () => {
    await client.close()
    await lc.close()
    rmSync(spillDir, { recursive: true, force: true })
  })
  t.deepEqual(lc.options.thresholds, { target: 0.75, spill: 0.85, pause: 0.92, terminate: 0.98 })
  const counts = await client.compute(bag.fromSequence(Array.from({ length: 1000 }, (_, i) => i % 7), { npartitions: 4 }).groupBy((x) => x).map(([k, xs]) => [k, xs.length]))
  t.deepEqual((counts as [number, number][]).sort((a, b) => a[0] - b[0]), Array.from({ length: 7 }, (_, k) => [k, k < 6 ? 143 : 142]))
})
