// Frame values cross the workers' SpillBuffers without copies: a kernel's
// output is stored as the core made it, and a kernel reads its stored
// inputs where they lie. These tests hold that to its promises, through
// the package and real workers: answers stay exact after the values are
// spilled and read back, and no user function can change a stored value
// by writing to what it was given (a Buffer, or mapBatches' Arrow vectors).
import test from 'ava'
import { join } from 'node:path'
import { tableFromArrays, tableFromIPC, tableToIPC } from 'apache-arrow'
import { col, count, frame, schedulerWorkers, SpillBuffer, sum, type Client } from 'spillway'
import { native } from '../src/native/binding'
import { cluster, sharedCluster, until } from './cluster-helpers'
import { scratch } from './helpers'

let client!: Client
sharedCluster(test, (c) => (client = c))

const held = async (c: Client) => Object.values(await c.whoHas()).filter((ws) => ws.length > 0).length
const counts = async (c: Client, name: 'spillCount' | 'unspillCount') => Object.values(await schedulerWorkers(c)).reduce((s, w) => s + ((w.metrics as any)[name] ?? 0), 0)

test('a kernel output is stored and read by kernels as the same bytes, counted once; get and peek still hand out copies', async (t) => {
  const n = 20_000
  const input = Buffer.from(tableToIPC(tableFromArrays({ v: Float64Array.from({ length: n }, (_, i) => i) }), 'stream'))
  const plan = { source: { kind: 'inputs' }, schema: [{ name: 'v', type: 'float64', nullable: false }], steps: [] }
  const out = await native.frameRunPartition(JSON.stringify(plan), [input])
  const buf = new SpillBuffer({ dir: join(scratch(t), 'spill'), memoryLimit: 64 << 20 })
  t.teardown(() => buf.close())
  await buf.set('p', out)
  t.is(buf.metrics().managedBytes, out.length)
  // A probe only: nothing in spillway writes to a kernel's output. Written
  // here, the stored bytes change with it: they were taken, not copied.
  const last = out.length - 1
  const was = out[last]
  out[last] = was ^ 0xff
  t.is((await buf.peekShared('p'))![last], was ^ 0xff)
  out[last] = was
  // What the public reads hand out is the caller's own to write.
  ;(await buf.peek('p'))!.fill(0)
  ;(await buf.get('p'))!.fill(0)
  const sent = (await buf.getFrame('p'))!
  t.deepEqual([sent.compressed, sent.data.length], [false, out.length])
  sent.data.fill(0)
  const shared = (await buf.peekShared('p'))!
  t.deepEqual([...(tableFromIPC(shared).getChild('v')!.toArray() as Float64Array)], Array.from({ length: n }, (_, i) => i))
  t.is(buf.metrics().managedBytes, out.length)
})

test('a join and a group-by over frames spilled and read back are exact', async (t) => {
  // A target of 0.1% of each worker's limit (about 1 MiB): nearly every partition goes to disk.
  const { client: c } = await cluster(t, { memoryTarget: 0.001, reserveMemGb: 0.5 })
  const n = 400_000
  const m = 20_000
  const left = tableFromArrays({ k: Int32Array.from({ length: n }, (_, i) => (i * 7919) % m), g: Int32Array.from({ length: n }, (_, i) => i % 7), v: Float64Array.from({ length: n }, (_, i) => (i % 1000) / 8) })
  const right = tableFromArrays({ k: Int32Array.from({ length: m }, (_, i) => i), w: Float64Array.from({ length: m }, (_, i) => i % 13) })
  // Filters the core runs: their outputs are the kernel's own bytes, stored as they are.
  const o = await c.persist(frame.fromArrow(left, { npartitions: 8 }).filter(col('v').gtEq(0)))
  const r = await c.persist(frame.fromArrow(right, { npartitions: 2 }).filter(col('w').gtEq(0)))
  await until(async () => (await held(c)) >= o.npartitions + r.npartitions, 60_000, 'partitions held')
  t.true((await counts(c, 'spillCount')) > 0, 'partitions spilled')
  const unspilled = await counts(c, 'unspillCount')

  const joined = o.join(r, { on: 'k', how: 'inner', broadcastBytes: 0 })
  const got = await c.compute(joined.groupBy('g').agg({ n: count(), sv: sum('v'), sw: sum('w') }))
  const want = new Map<number, { n: number; sv: number; sw: number }>()
  for (let i = 0; i < n; i++) {
    const g = i % 7
    const e = want.get(g) ?? want.set(g, { n: 0, sv: 0, sw: 0 }).get(g)!
    e.n++
    e.sv += (i % 1000) / 8
    e.sw += ((i * 7919) % m) % 13
  }
  t.is(got.numRows, 7)
  for (const row of got) {
    const e = want.get(Number(row.g))!
    t.is(Number(row.n), e.n)
    // Sums of eighths and small integers: exact in float64 in any order.
    t.is(row.sv, e.sv)
    t.is(row.sw, e.sw)
  }
  t.true((await counts(c, 'unspillCount')) > unspilled, 'spilled partitions were read back')
  // The joined rows themselves, not only their sums.
  const rows = await c.compute(joined)
  t.is(rows.numRows, n)
  const ks = rows.getChild('k')!.toArray() as Int32Array
  const ws = rows.getChild('w')!.toArray() as Float64Array
  t.true(ks.every((k, i) => ws[i] === k % 13))
  o.release()
  r.release()
})

test('a task that writes into the Buffer it was given does not change what another task, or the client, gets', async (t) => {
  const [a] = Object.keys(await schedulerWorkers(client))
  const n = 300_000
  // Past the small-value tier: held in the SpillBuffer.
  const big = client.submit((n: number) => Buffer.alloc(n, 7), [n], { workers: [a], pure: false })
  await big.result()
  const zeroed = client.submit((b: Buffer) => (b.fill(0), b.reduce((s, x) => s + x, 0)), [big], { workers: [a], pure: false })
  t.is(await zeroed.result(), 0)
  const seen = client.submit((b: Buffer) => b.reduce((s, x) => s + x, 0), [big], { workers: [a], pure: false })
  t.is(await seen.result(), 7 * n)
  t.deepEqual(await big.result(), Buffer.alloc(n, 7))
})

test("mapBatches writing into its input's Arrow vectors does not change the stored partition", async (t) => {
  const n = 40_000
  const table = tableFromArrays({ id: Int32Array.from({ length: n }, (_, i) => i), v: Float64Array.from({ length: n }, (_, i) => i / 4) })
  // 240 kB partitions made by a kernel: held in the SpillBuffer as the core made them.
  const kept = await client.persist(frame.fromArrow(table, { npartitions: 2 }).filter(col('v').gtEq(0)))
  await until(async () => (await held(client)) >= kept.npartitions, 30_000, 'partitions held')
  const overwritten = kept.mapBatches(
    (batch: any) => {
      for (const d of batch.getChild('v').data) d.values.fill(-1)
      return batch
    },
    { schema: { id: 'int32', v: 'float64' } },
  )
  const z = await client.compute(overwritten)
  t.is(z.numRows, n)
  t.true((z.getChild('v')!.toArray() as Float64Array).every((x) => x === -1), 'the function did write into its batches')
  // What persist holds, read by a kernel and by the client, is as it was.
  const total = await client.compute(kept.agg({ s: sum('v') }))
  t.is(total.get(0)!.s, ((n - 1) * n) / 8)
  const again = await client.compute(kept)
  t.deepEqual([...(again.getChild('v')!.toArray() as Float64Array)], Array.from({ length: n }, (_, i) => i / 4))
  kept.release()
})
