// Bags fed from streams: a Node Readable (bytes → lines, objects), a web
// ReadableStream and an async generator, through the package and a
// 2-worker cluster; the client's memory sampled while a stream far larger
// than it may hold passes through.
import test from 'ava'
import { Readable } from 'node:stream'
import { bag, type Client } from 'spillway'
import { sharedCluster } from './cluster-helpers'

let client!: Client
sharedCluster(test, (c) => (client = c))

const MIB = 2 ** 20
const LINE = 100

/** `lines` lines of LINE bytes each ('000000042 xxx…\n'), made 64 KiB at a time as the stream is read: never all at once. */
function lazyLines(lines: number): { stream: Readable; pulled: () => number } {
  const perChunk = Math.floor((64 * 1024) / LINE)
  const pad = 'x'.repeat(LINE - 11)
  let next = 0
  const stream = new Readable({
    read() {
      if (next >= lines) return void this.push(null)
      const n = Math.min(perChunk, lines - next)
      let s = ''
      for (let i = 0; i < n; i++) s += `${String(next + i).padStart(9, '0')} ${pad}\n`
      next += n
      this.push(Buffer.from(s))
    },
  })
  return { stream, pulled: () => next }
}

test.serial('fromAsyncIterable: a 572 MiB byte stream becomes lines on the workers while the client\'s memory plateaus (sampled)', async (t) => {
  const lines = 6_000_000
  const total = lines * LINE
  const { stream, pulled } = lazyLines(lines)
  global.gc?.()
  const base = process.memoryUsage().rss
  // The peak growth once the first third has passed (the client's fixed costs: the scheduler's
  // 64 MiB buffer of scattered copies, V8's heap sized up, the allocator), and over the whole run.
  let settled = 0
  let peak = 0
  const sampler = setInterval(() => {
    const grown = process.memoryUsage().rss - base
    peak = Math.max(peak, grown)
    if (pulled() <= lines / 3) settled = peak
  }, 20)
  let b
  try {
    b = await bag.fromAsyncIterable<string>(stream, { client, partitionSize: 50_000 })
  } finally {
    clearInterval(sampler)
  }
  t.is(pulled(), lines)
  t.is(b.npartitions, lines / 50_000)
  t.is(await client.compute(b.count()), lines)
  t.is(await client.compute(b.map((l: string) => Number(l.slice(0, 9))).sum()), (lines * (lines - 1)) / 2)
  t.log(`${(total / MIB).toFixed(0)} MiB streamed; client rss grew ${(settled / MIB).toFixed(0)} MiB over the first third, ${(peak / MIB).toFixed(0)} MiB at its peak`)
  // Holding the stream would grow it by 381 MiB more over the last two thirds; streaming grows it
  // by what the allocator and V8 keep from the scatters in flight (measured 40-97 MiB, by GC timing).
  const held = (total * 2) / 3
  t.true(peak - settled < held / 2, `client rss grew ${((peak - settled) / MIB).toFixed(0)} MiB more while the last ${((total * 2) / 3 / MIB).toFixed(0)} MiB passed`)
  b.release()
})

test.serial('fromAsyncIterable: backpressure: the source is read no further than the partitions in flight', async (t) => {
  let produced = 0
  let release!: () => void
  const gate = new Promise<void>((r) => (release = r))
  const slow = {
    scatter: async (v: unknown, o?: { hash?: boolean; split?: boolean }) => {
      await gate
      return client.scatter(v, o)
    },
  }
  async function* source() {
    for (let i = 0; i < 100; i++) {
      produced++
      yield i
    }
  }
  const done = bag.fromAsyncIterable(source(), { client: slow, partitionSize: 10, maxInFlight: 2 })
  await new Promise((r) => setTimeout(r, 300))
  // Two partitions handed to the cluster, the source paused: 20 items read, none after them.
  t.is(produced, 20)
  release()
  const b = await done
  t.is(produced, 100)
  t.deepEqual(await client.compute(b.filter((x: number) => x % 10 === 0)), [0, 10, 20, 30, 40, 50, 60, 70, 80, 90])
  b.release()
})

test.serial('fromAsyncIterable: object-mode Readable, web ReadableStream of objects or bytes, async generator, and its errors', async (t) => {
  const objects = Readable.from([{ a: 1 }, { a: 2 }, { a: 3 }])
  const b1 = await bag.fromAsyncIterable<{ a: number }>(objects, { client, partitionSize: 2 })
  t.is(b1.npartitions, 2)
  t.is(await client.compute(b1.pluck('a').sum()), 6)
  const web = new ReadableStream({
    start(c) {
      c.enqueue(new TextEncoder().encode('é1\nb'))
      c.enqueue(new Uint8Array([0xc3]))
      c.enqueue(new Uint8Array([0xa9, 0x0a, 0x63]))
      c.close()
    },
  })
  t.deepEqual(await client.compute(await bag.fromAsyncIterable(web, { client })), ['é1', 'bé', 'c'])
  const webObjects = new ReadableStream({ start: (c) => (c.enqueue({ k: 'x' }), c.close()) })
  t.deepEqual(await client.compute(await bag.fromAsyncIterable(webObjects, { client })), [{ k: 'x' }])
  const empty = await bag.fromAsyncIterable((async function* () {})(), { client })
  t.is(await client.compute(empty.count()), 0)
  async function* failing() {
    yield 1
    yield 2
    throw new Error('source broke at item 3')
  }
  await t.throwsAsync(bag.fromAsyncIterable(failing(), { client, partitionSize: 1 }), { message: 'source broke at item 3' })
  await t.throwsAsync(bag.fromAsyncIterable(42 as any, { client }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /source/ })
  await t.throwsAsync(bag.fromAsyncIterable([1], { client, partitionSize: 0 }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /options\.partitionSize/ })
  await t.throwsAsync(bag.fromAsyncIterable([1], {} as any), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /options\.client/ })
})
