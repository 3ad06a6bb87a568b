import test from 'ava'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { random, schedulerWorkers, workerSpillBytes } from 'spillway'
import { cluster, GIB, until } from './cluster-helpers'

const FIX = join(__dirname, 'fixtures', 'tasks')
const esm = (name: string) => ({ module: join(FIX, 'esm.mjs'), name })

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/** The column fixture, computed here. */
function column(i: number, n: number): Float64Array {
  const out = new Float64Array(n)
  for (let j = 0; j < n; j++) out[j] = ((i * 7919 + j * 104729) & 1048575) * 0.25
  return out
}

const managed = async (client: any) => Object.values(await schedulerWorkers(client)).reduce((s, w) => s + (w.metrics as any).managedBytes, 0)

test('results 1.5x the workers’ memory are counted, spilled, and come back exact', async (t) => {
  const { client } = await cluster(t)
  const n = 8_000_000 // 64 MB per result
  const count = 48 // 3 GiB in all, over 2 x 1 GiB workers
  const parts = Array.from({ length: count }, (_, i) => client.submit(esm('column'), [i, n]))
  const totals = client.submit(esm('totals'), [parts.slice(0, 4)])
  const sums = client.map(esm('total'), parts)
  const got = (await client.gather(sums)) as number[]
  const workers = Object.values(await schedulerWorkers(client))
  const spilled = workers.reduce((s, w) => s + workerSpillBytes(w.metrics), 0)
  const spilledValues = workers.reduce((s, w) => s + (w.metrics as any).spilledBytes.memory, 0)
  const held = workers.reduce((s, w) => s + (w.metrics as any).managedBytes, 0)
  t.true(held >= count * n * 8, `managed ${held} counts every result`)
  // The values spilled; on disk they take less (Float64Array results are
  // shuffled and compressed where that pays, and these columns compress).
  t.true(spilledValues > 0.3 * GIB, `spilled ${spilledValues}`)
  t.true(spilled > 0 && spilled <= spilledValues, `${spilled} bytes on disk for ${spilledValues}`)
  for (let i = 0; i < count; i += 11) {
    const expect = column(i, n).reduce((a, b) => a + b, 0)
    t.is(got[i], expect, `total of column ${i}`)
  }
  const back = (await parts[0].result()) as Float64Array
  t.deepEqual(back, column(0, n))
  const last = (await parts[count - 1].result()) as Float64Array
  t.true(Buffer.from(last.buffer, last.byteOffset, last.byteLength).equals(Buffer.from(column(count - 1, n).buffer)))
  t.deepEqual(await totals.result(), got.slice(0, 4))
})

test('a dependency on another worker moves worker to worker over the data socket', async (t) => {
  const { client } = await cluster(t)
  const [a, b] = Object.keys(await schedulerWorkers(client))
  const col = client.submit(esm('column'), [3, 1_000_000], { workers: [a] })
  const sum = client.submit(esm('total'), [col], { workers: [b] })
  t.is(await sum.result(), column(3, 1_000_000).reduce((x, y) => x + y, 0))
  const ws = await schedulerWorkers(client)
  const ta = (ws[a].metrics as any).transfer
  const tb = (ws[b].metrics as any).transfer
  t.true(ta.outgoingBytes >= 8_000_000, `sent ${ta.outgoingBytes}`)
  t.true(tb.incomingBytes >= 8_000_000, `received ${tb.incomingBytes}`)
  t.true(tb.outgoingBytes < 100, 'b sent only its small sum, to the client')
})

test('a released or garbage-collected Future frees its key once its dependents have run', async (t) => {
  const { client } = await cluster(t)
  const s = client.scheduler
  let keys: string[] = []
  ;(() => {
    const parts = Array.from({ length: 4 }, (_, i) => client.submit(esm('column'), [i, 1_000_000]))
    keys = parts.map((p) => p.key)
  })()
  const total = client.submit(esm('sumAll'), [[1, 2]])
  await total.result()
  await until(async () => {
    gc()
    await new Promise((r) => setImmediate(r))
    return keys.every((k) => !s.tasks.has(k))
  }, 20_000, 'collected Futures to free their keys')
  // A dependency held by nothing but its dependent lives until the dependent ran.
  const dep = client.submit(esm('column'), [9, 1_000_000])
  const depKey = dep.key
  const after = client.submit(esm('total'), [dep])
  dep.release()
  t.is(await after.result(), column(9, 1_000_000).reduce((x, y) => x + y, 0))
  // Its value is freed; the record stays (released) while its dependent might need it made again.
  await until(() => (s.tasks.get(depKey)?.state ?? 'released') === 'released', 10_000, 'the dependency to be freed')
  after.release()
  total.release()
  await until(async () => (await managed(client)) === 0, 10_000, 'workers to hold nothing')
})

test('mapBlocks runs a user function where each chunk lives, and the built-in reductions work on the result', async (t) => {
  const { client } = await cluster(t)
  const x = random.random([2_000_000], { chunks: 250_000, seed: 3 })
  const y = x.mapBlocks(esm('plusOne'))
  const [mx, my] = [await client.compute(x.mean()), await client.compute(y.mean())]
  t.true(Math.abs(my - (mx + 1)) < 1e-12, `${my} vs ${mx} + 1`)
  const persisted = await client.persist(y)
  await persisted.wait()
  t.is(await client.compute(persisted.count()), 2_000_000)
  t.true(Math.abs((await client.compute(persisted.min())) - (await client.compute(x.min())) - 1) < 1e-12)
  t.throws(() => x.mapBlocks(esm('plusOne'), { dtype: 'float16' as any }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /dtype/ })
  persisted.release()
  await until(async () => (await managed(client)) === 0, 10_000, 'workers to hold nothing')
})

test('a spilled input travels to the worker that needs it as its compressed frame', async (t) => {
  const { client } = await cluster(t)
  const [a, b] = Object.keys(await schedulerWorkers(client))
  const n = 64 * 2 ** 20
  const z = client.submit(esm('zeros'), [n], { workers: [a] })
  await z.settled()
  // Push it out of a's memory: newer values take its place, the oldest spills.
  const fill = Array.from({ length: 14 }, (_, i) => client.submit(esm('column'), [i, 8_000_000], { workers: [a] }))
  await client.gather(fill.map((f) => client.submit(esm('total'), [f], { workers: [a] })))
  await until(async () => ((await schedulerWorkers(client))[a].metrics as any).spillCount > 0, 10_000, 'a to spill')
  const before = ((await schedulerWorkers(client))[a].metrics as any).transfer.outgoingBytes
  t.is(await client.submit(esm('countZeros'), [z], { workers: [b] }).result(), n)
  const sent = ((await schedulerWorkers(client))[a].metrics as any).transfer.outgoingBytes - before
  t.true(sent < n / 50, `${sent} bytes sent for a ${n}-byte value`)
})
