// Frame tasks are seen as every other task: by name on the dashboard's task
// groups and in progress bars, and in clusterReport's managed memory and
// spilled bytes (a partition is its Arrow IPC bytes held raw in the
// worker's SpillBuffer), through the package and real workers.
import test from 'ava'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { clusterReport, clusterView, col, count, frame, nUnique, sum, taskProgress, withProgress } from 'spillway'
import { cluster, GIB, until } from './cluster-helpers'
import { fakeTty } from './tty-helpers'

const dir = mkdtempSync(join(tmpdir(), 'spillway-frame-visible-'))
test.after.always(() => rmSync(dir, { recursive: true, force: true }))

/** ~4 MiB of CSV in 1 MiB blocks: partitions large enough to see in GiB figures. */
function bigCsv(): string {
  const path = join(dir, 'big.csv')
  const lines = Array.from({ length: 120_000 }, (_, i) => `${i},city ${i % 17},${(i % 1000) / 8}`)
  writeFileSync(path, `id,city,amount\n${lines.join('\n')}\n`)
  return path
}

test('a persisted frame: its groups on the dashboard, its tasks in progress, its bytes in managed memory and, once spilled, in spilled bytes', async (t) => {
  const { client } = await cluster(t, { reserveMemGb: 0.5 })
  const f = frame.readCsv(bigCsv(), { blocksize: '1 MiB' })
  const kept = await client.persist(f.filter(col('amount').gtEq(0)))
  const byCity = await client.persist(kept.groupBy('city').agg({ n: count(), total: sum('amount') }))
  const keys = [...kept.keys(), ...byCity.keys()]
  const held = () => keys.every((k) => client.scheduler.tasks.get(k)?.state === 'memory')
  await until(held, 60_000, 'persisted partitions in memory')

  // Progress counts frame tasks as it counts chunks.
  t.like(taskProgress(client, keys), { done: keys.length, total: keys.length })
  const tty = fakeTty()
  // The client here silences logs (so no bar): its scheduler alone is what a bar reads.
  await withProgress({ scheduler: client.scheduler }, keys, () => client.compute(byCity), { stream: tty, intervalMs: 20, clear: false, label: 'frame' })
  t.regex(tty.text(), new RegExp(`frame \\[.*\\] ${keys.length}/${keys.length} tasks`))

  // The dashboard's task groups name them as the frame's operations.
  const groups = Object.fromEntries(clusterView(client, 'test').tasks.groups.map((g) => [g.name, g]))
  t.like(groups.filter, { memory: kept.npartitions, total: kept.npartitions })
  t.like(groups['group-by'], { memory: 1 })

  // Managed memory holds the IPC bytes the scheduler knows the partitions by.
  const bytes = keys.reduce((s, k) => s + client.scheduler.tasks.get(k)!.nbytes, 0)
  t.true(bytes > 2 * 2 ** 20, `partitions of ${bytes} bytes`)
  const before = await clusterReport(client)
  t.true(before.totalMemoryGib * GIB >= bytes, `report's memory ${before.totalMemoryGib * GIB} ≥ ${bytes}`)
  t.is(before.totalSpillGib, 0)

  // Forced to spill: the same bytes leave managed memory for the spill files, and read back exactly.
  await client.scheduler.setThresholds({ target: 1e-6 })
  let after = before
  await until(async () => (after = await clusterReport(client)).totalSpillGib > 0 && after.totalMemoryGib * GIB < bytes / 4, 30_000, 'frame partitions spilled')
  t.true(after.spillCount >= kept.npartitions, `${after.spillCount} spills`)
  t.log(`held ${(bytes / 2 ** 20).toFixed(2)} MiB; report before: memory ${(before.totalMemoryGib * 1024).toFixed(2)} MiB; after: memory ${(after.totalMemoryGib * 1024).toFixed(2)} MiB, spilled ${(after.totalSpillGib * 1024).toFixed(2)} MiB`)
  const table = await client.compute(kept)
  t.is(table.numRows, 120_000)
  t.is(Number(table.getChild('id')!.get(119_999)), 119_999)
  kept.release()
  byCity.release()
})

test('a frame join through the shuffle: on the dashboard\'s shuffle panel while in flight (inputs, barrier, outputs), gone once done, its shard bytes in clusterReport', async (t) => {
  const { client } = await cluster(t, { reserveMemGb: 0.5 })
  const path = join(dir, 'orders.csv')
  writeFileSync(path, `id,city,amount\n${Array.from({ length: 400_000 }, (_, i) => `${i},city ${i % 17},${i % 1000}`).join('\n')}\n`)
  const orders = frame.readCsv(path, { blocksize: '2 MiB' })
  const cities = frame.readCsv(bigCsv(), { blocksize: '1 MiB' }).select('city', 'id')
  // Both sides in several partitions and no broadcast: every row crosses the shuffle.
  const joined = orders.join(cities, { on: 'id', broadcastBytes: 0, npartitions: 6 })
  const before = await clusterReport(client)
  // Aggregates of every column: the optimizer shuffles only the columns read, and this measures the shard bytes.
  const pending = client.compute(joined.agg({ n: count(), amount: sum('amount'), cities: nUnique('city') }))
  const seen: ReturnType<typeof clusterView>['shuffles'] = []
  let done = false
  void pending.finally(() => (done = true))
  while (!done) {
    const v = clusterView(client, 'test').shuffles.find((s) => s.label === 'join')
    if (v) seen.push(v)
    await new Promise((r) => setTimeout(r, 5))
  }
  const table = await pending
  t.is(Number(table.getChild('n')!.get(0)), 120_000)
  const inputs = orders.npartitions + cities.npartitions
  t.true(seen.length > 0, 'the join was on the shuffle panel')
  t.true(seen.every((s) => s.inputs.total === inputs && s.outputs.total === 6), JSON.stringify(seen.at(-1)))
  t.true(seen.some((s) => s.barrier && s.inputs.done === inputs), 'seen past its barrier')
  t.deepEqual(clusterView(client, 'test').shuffles, [], 'none once it is done')
  // The workers' figures come with their next heartbeat.
  let shuffled = 0
  await until(async () => (shuffled = ((await clusterReport(client)).shuffleGib - before.shuffleGib) * GIB) > 4 * 2 ** 20, 20_000, `shard bytes in clusterReport (${shuffled} so far)`)
  t.true(shuffled > 4 * 2 ** 20, `${shuffled} shard bytes counted in clusterReport's shuffle bytes`)
})
