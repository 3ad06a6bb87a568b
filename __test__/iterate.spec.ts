// client.iterate through the package and real workers: a bag's items and a
// frame's record batches in partition order; the keys it made let go of
// when the reader breaks out or its signal aborts; and the client's memory
// bounded by a few partitions however slowly the reader consumes.
import test from 'ava'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { bag, count, frame, type Client } from 'spillway'
import { sharedCluster, until } from './cluster-helpers'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

const dir = mkdtempSync(join(tmpdir(), 'spillway-iterate-'))
let client!: Client
sharedCluster(test, (c) => (client = c))
test.after.always(() => rmSync(dir, { recursive: true, force: true }))

/** Every key the cluster knows (scheduler and workers) is gone. */
async function nothingHeld(): Promise<boolean> {
  const held = Object.values(await client.hasWhat()).flat()
  return held.length === 0 && Object.keys(await client.whoHas()).length === 0
}

test('a bag: every item, in partition order, and nothing left held', async (t) => {
  const b = bag.fromSequence(Array.from({ length: 100 }, (_, i) => i), { npartitions: 10 }).map((x: number) => x * 2)
  const got: number[] = []
  for await (const x of client.iterate(b)) got.push(x)
  t.deepEqual(got, Array.from({ length: 100 }, (_, i) => i * 2))
  await until(nothingHeld, 20_000, 'every key let go of')
  t.pass()
})

test('a frame: its RecordBatches in order, the rows those of the file', async (t) => {
  const path = join(dir, 'rows.csv')
  const lines = Array.from({ length: 400 }, (_, i) => `${i},${i % 7 === 0 ? '' : `name ${i}`}`)
  writeFileSync(path, `id,name\n${lines.join('\n')}\n`)
  const f = frame.readCsv(path, { blocksize: 1000 })
  t.true(f.npartitions > 3)
  const ids: number[] = []
  const names: (string | null)[] = []
  for await (const batch of client.iterate(f)) {
    t.deepEqual(batch.schema.fields.map((x) => x.name), ['id', 'name'])
    for (const v of batch.getChild('id')!.toArray()) ids.push(Number(v))
    names.push(...(batch.getChild('name')!.toArray() as (string | null)[]))
  }
  t.deepEqual(ids, Array.from({ length: 400 }, (_, i) => i))
  t.deepEqual(names, Array.from({ length: 400 }, (_, i) => (i % 7 === 0 ? null : `name ${i}`)))
  await until(nothingHeld, 20_000, 'every key let go of')
})

test('breaking out of the loop lets go of every key it made, computed or not', async (t) => {
  const b = bag.fromSequence(Array.from({ length: 200 }, (_, i) => i), { npartitions: 20 }).map((x: number) => x + 1)
  let first: number | undefined
  for await (const x of client.iterate(b)) {
    first = x
    break
  }
  t.is(first, 1)
  await until(nothingHeld, 20_000, 'every key let go of after break')
  t.pass()
})

test("an aborted signal rejects the loop with the signal's reason and lets go of every key", async (t) => {
  const b = bag.fromSequence(Array.from({ length: 200 }, (_, i) => i), { npartitions: 20 })
  const ac = new AbortController()
  const reason = new Error('the user had enough')
  const seen: number[] = []
  const err = await t.throwsAsync(async () => {
    for await (const x of client.iterate(b, { signal: ac.signal })) {
      seen.push(x)
      if (seen.length === 3) ac.abort(reason)
    }
  })
  t.is(err, reason)
  t.deepEqual(seen, [0, 1, 2])
  await until(nothingHeld, 20_000, 'every key let go of after abort')
  // Aborted before it starts: rejects at once, submits nothing.
  const before = new AbortController()
  before.abort()
  const it = client.iterate(b, { signal: before.signal })
  const e2 = await it.next().then(
    () => undefined,
    (e: unknown) => e,
  )
  t.is((e2 as DOMException).name, 'AbortError')
  t.true(await nothingHeld())
})

test("a groupBy's output frame and a shuffled bag: what they yield, and a break midway leaves no key behind", async (t) => {
  const path = join(dir, 'groups.csv')
  writeFileSync(path, `k,v\n${Array.from({ length: 200 }, (_, i) => `${i % 5},${i}`).join('\n')}\n`)
  const totals = new Map<number, number>()
  for await (const batch of client.iterate(frame.readCsv(path, { blocksize: 400 }).groupBy('k').agg({ n: count() }, { splitOut: 2 }))) {
    for (const row of batch) totals.set(Number(row!.k), Number(row!.n))
  }
  t.deepEqual([...totals].sort(), [0, 1, 2, 3, 4].map((k) => [k, 40]))
  const grouped = bag.fromSequence(Array.from({ length: 300 }, (_, i) => i), { npartitions: 6 }).groupBy((x: number) => x % 7, { npartitions: 6 })
  for await (const pair of client.iterate(grouped)) {
    t.is((pair as [number, number[]])[1].length > 0, true)
    break
  }
  await until(nothingHeld, 20_000, 'every key let go of after a break in a shuffle')
})

test("a partition that fails rejects the loop with the task's error and lets go of every key", async (t) => {
  const b = bag.fromSequence(Array.from({ length: 60 }, (_, i) => i), { npartitions: 6 }).map((x: number) => {
    if (x === 35) throw new Error(`no ${x}`)
    return x
  })
  const seen: number[] = []
  const e = await t.throwsAsync(async () => {
    for await (const x of client.iterate(b)) seen.push(x)
  })
  t.is((e as any).code, 'ERR_SPILLWAY_TASK')
  t.regex(e!.message, /no 35/)
  t.deepEqual(seen, Array.from({ length: 30 }, (_, i) => i))
  await until(nothingHeld, 20_000, 'every key let go of after a failure')
})

test('a slow reader over many partitions: the client holds a few partitions, not all', async (t) => {
  const partitions = 40
  const size = 2 ** 20
  // Each partition one 1 MiB string, made on the workers.
  const b = bag.fromSequence(Array.from({ length: partitions }, (_, i) => i), { npartitions: partitions }).map((i: number) => String.fromCharCode(97 + (i % 26)).repeat(2 ** 20))
  const used = () => {
    gc()
    const m = process.memoryUsage()
    return m.heapUsed + m.arrayBuffers
  }
  const base = used()
  let peak = 0
  let n = 0
  for await (const s of client.iterate(b, { prefetch: 2 })) {
    t.is(s.length, size)
    t.is(s[0], String.fromCharCode(97 + (n % 26)))
    n++
    // A slow reader: the workers finish everything long before it gets there.
    await new Promise((r) => setTimeout(r, 25))
    peak = Math.max(peak, used() - base)
  }
  t.is(n, partitions)
  t.log(`peak growth ${(peak / 2 ** 20).toFixed(1)} MiB over ${partitions} MiB of items`)
  // The current partition and two ahead (and their transfer buffers): far under the 40 MiB a compute would hold.
  t.true(peak < 16 * 2 ** 20, `peak growth ${peak} bytes`)
  await until(nothingHeld, 20_000, 'every key let go of')
})

test('bad arguments are refused by name', (t) => {
  const b = bag.fromSequence([1, 2, 3])
  const e = t.throws(() => client.iterate(b, { prefetch: -1 }))
  t.is((e as any).code, 'ERR_SPILLWAY_INVALID_ARGUMENT')
  t.regex(e!.message, /options\.prefetch.*-1.*an integer ≥ 0/)
  t.throws(() => client.iterate([1, 2] as any), { message: /collection.*a Bag or a Frame/ })
})
