// array.rechunk on the P2P shuffle, against the same array computed here,
// unchunked: every new chunk must hold exactly its values, in row-major
// order, as a raw chunk the native reductions read.
import test from 'ava'
import { join } from 'node:path'
import { generateChunkSync, random, schedulerWorkers, setupClient, type ChunkedArray, type Client } from 'spillway'
import { until } from './cluster-helpers'

const FIX = join(__dirname, 'fixtures', 'tasks', 'rechunk.mjs')
const fixture = (name: string) => ({ module: FIX, name })
const weight = (i: number, k: number) => i * 1_000_003 + k + 1

let client: Client
let close: () => Promise<void>
test.before(async () => {
  const r = await setupClient({ workloadType: 'cpu', maxWorkers: 2, maxMemGb: 3, reserveMemGb: 0.5, dashboard: false, silenceLogs: true })
  client = r.client
  close = async () => {
    await r.client.close()
    await r.cluster.close()
  }
})
test.after.always(async () => close?.())

type Values = Float64Array | BigInt64Array

/** The whole array, row-major, from its chunks generated here. */
function reference(x: ChunkedArray, kind: 'random' | 'randint', seed: number, low?: number, high?: number): Values {
  const shape = x.shape
  const out = kind === 'random' ? new Float64Array(x.size) : new BigInt64Array(x.size)
  const strides = shape.map((_, d) => shape.slice(d + 1).reduce((a, b) => a * b, 1))
  for (let id = 0; id < x.nchunks; id++) {
    const { lo, size } = block(x, id)
    const len = size.reduce((a, b) => a * b, 1)
    const buf = generateChunkSync({ kind, seed, chunkId: id, len, low, high })
    const vals = kind === 'random' ? new Float64Array(buf.buffer, buf.byteOffset, len) : new BigInt64Array(buf.buffer, buf.byteOffset, len)
    eachPlace(size, (k, idx) => {
      let at = 0
      for (let d = 0; d < shape.length; d++) at += (lo[d] + idx[d]) * strides[d]
      out[at] = vals[k] as never
    })
  }
  return out
}

function block(x: { shape: number[]; chunks: number[]; numblocks: number[] }, id: number): { lo: number[]; size: number[] } {
  const lo: number[] = []
  const size: number[] = []
  for (let d = x.shape.length - 1; d >= 0; d--) {
    const i = id % x.numblocks[d]
    id = Math.floor(id / x.numblocks[d])
    lo[d] = i * x.chunks[d]
    size[d] = Math.min(x.chunks[d], x.shape[d] - lo[d])
  }
  return { lo, size }
}

/** Calls fn(k, index) for every place of a block of `size`, in row-major order. */
function eachPlace(size: number[], fn: (k: number, idx: number[]) => void): void {
  const idx = new Array(size.length).fill(0)
  const n = size.reduce((a, b) => a * b, 1)
  for (let k = 0; k < n; k++) {
    fn(k, idx)
    for (let d = size.length - 1; d >= 0 && ++idx[d] === size[d]; d--) idx[d] = 0
  }
}

/** The checksum `positional` computes on the workers, here, from the reference on the new grid. */
function expectedChecksum(ref: Values, y: ChunkedArray): number {
  const strides = y.shape.map((_, d) => y.shape.slice(d + 1).reduce((a, b) => a * b, 1))
  let exact = 0n
  let float = 0
  for (let id = 0; id < y.nchunks; id++) {
    const { lo, size } = block(y, id)
    eachPlace(size, (k, idx) => {
      let at = 0
      for (let d = 0; d < y.shape.length; d++) at += (lo[d] + idx[d]) * strides[d]
      if (ref instanceof BigInt64Array) exact += ref[at] * BigInt(weight(id, k))
      else float += ref[at] * weight(id, k)
    })
  }
  return ref instanceof BigInt64Array ? Number(exact) : float
}

function stats(ref: Values): { sum: number; min: number; max: number } {
  let sum = 0
  let min = Infinity
  let max = -Infinity
  for (const v of ref) {
    const n = Number(v)
    sum += n
    if (n < min) min = n
    if (n > max) max = n
  }
  return { sum, min, max }
}

const close9 = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.abs(b)

test.serial('float64 rechunked to columns, rows and squares: the same sum, mean, min and max, and every chunk holds exactly its values', async (t) => {
  const x = random.random([3000, 2000], { chunks: [500, 400], seed: 1 })
  const ref = reference(x, 'random', 1)
  const want = stats(ref)
  for (const [chunks, numblocks] of [
    [[3000, 100], [1, 20]],
    [[250, 2000], [12, 1]],
    [700, [5, 3]],
  ] as const) {
    const y = x.rechunk(chunks as number | number[])
    t.deepEqual(y.shape, [3000, 2000])
    t.deepEqual(y.numblocks, numblocks)
    t.is(y.dtype, 'float64')
    const [sum, mean, min, max] = await Promise.all([client.compute(y.sum()), client.compute(y.mean()), client.compute(y.min()), client.compute(y.max())])
    t.true(close9(sum, want.sum), `${chunks}: sum ${sum} vs ${want.sum}`)
    t.true(close9(mean, want.sum / ref.length), `${chunks}: mean ${mean}`)
    t.is(min, want.min)
    t.is(max, want.max)
    const check = await client.compute(y.mapBlocks(fixture('positional')).sum())
    const expected = expectedChecksum(ref, y)
    t.true(close9(check, expected), `${chunks}: checksum ${check} vs ${expected}`)
  }
})

test.serial('int64 rechunked: sums exact, and every chunk holds exactly its values', async (t) => {
  // Thin rows and thin columns too: pieces of one row or a few columns.
  const x = random.randint(0, 10, [1200, 800], { chunks: [200, 160], seed: 2 })
  const ref = reference(x, 'randint', 2, 0, 10)
  const want = stats(ref)
  t.is(await client.compute(x.sum()), want.sum)
  for (const chunks of [[1200, 40], 300, [3, 800], [1200, 5]]) {
    const y = x.rechunk(chunks)
    t.is(y.dtype, 'int64')
    t.is(await client.compute(y.sum()), want.sum, `${chunks}`)
    t.is(await client.compute(y.mapBlocks(fixture('positional')).sum()), expectedChecksum(ref, y), `${chunks}`)
  }
})

test.serial('pieces past a shard part travel in several parts; 1-d and 3-d arrays; a persisted rechunk', async (t) => {
  // A 24 MB chunk cut into halves of 12 MB: each goes as two parts.
  const wide = random.randint(0, 1000, [3000, 2000], { chunks: [3000, 1000], seed: 3 })
  const wideRef = reference(wide, 'randint', 3, 0, 1000)
  const tall = wide.rechunk([1500, 2000])
  t.is(await client.compute(tall.mapBlocks(fixture('positional')).sum()), expectedChecksum(wideRef, tall))
  const line = random.randint(-5, 5, [100_000], { chunks: 7_000, seed: 4 })
  const lineRef = reference(line, 'randint', 4, -5, 5)
  for (const chunks of [30_000, [999]]) {
    const y = line.rechunk(chunks)
    t.is(await client.compute(y.mapBlocks(fixture('positional')).sum()), expectedChecksum(lineRef, y), `${chunks}`)
  }
  const cube = random.random([40, 30, 20], { chunks: [7, 11, 20], seed: 5 })
  const cubeRef = reference(cube, 'random', 5)
  const c2 = cube.rechunk([40, 4, 3])
  t.true(close9(await client.compute(c2.mapBlocks(fixture('positional')).sum()), expectedChecksum(cubeRef, c2)))
  t.is(await client.compute(c2.max()), stats(cubeRef).max)
  // Persisted: the new chunks stay on their owners and reduce there.
  const kept = await client.persist(random.random([3000, 2000], { chunks: [500, 400], seed: 1 }).rechunk([3000, 200]))
  await kept.wait()
  t.true(close9(await client.compute(kept.sum()), stats(reference(random.random([3000, 2000], { chunks: [500, 400], seed: 1 }), 'random', 1)).sum))
  t.is(await client.compute(kept.count()), 6_000_000)
  kept.release()
})

test.serial('bad chunks are refused naming the field; the same chunks are the same array', (t) => {
  const x = random.random([300, 200], { chunks: [50, 40], seed: 1 })
  for (const bad of [0, -3, 1.5, [100], [100, 0], [100, 20, 3], 'a', null, undefined, [Number.NaN, 4]]) {
    t.throws(() => x.rechunk(bad as never), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /chunks/ }, JSON.stringify(bad))
  }
  t.is(x.rechunk([50, 40]), x)
  t.is(x.rechunk([50, 40]).name, x.name)
  // Chunks past the shape are clamped to it, as when the array was made.
  t.deepEqual(x.rechunk([1000, 200]).chunks, [300, 200])
  t.is(x.rechunk([300, 100]).name, x.rechunk([300, 100]).name, 'the same graph, so it runs once')
})

test.serial('a worker SIGKILLed during a rechunk: the exact result', async (t) => {
  const x = random.randint(0, 100, [3000, 2000], { chunks: [250, 250], seed: 6 })
  const ref = reference(x, 'randint', 6, 0, 100)
  // Slow old chunks: the splits spread over time, so the kill lands among them.
  const y = x.mapBlocks(fixture('slowly')).rechunk([3000, 100])
  const pending = client.compute(y.mapBlocks(fixture('positional')).sum())
  const s = client.scheduler
  const splits = () => [...s.tasks.values()].filter((r) => r.group === 'rechunk-split' && r.state === 'memory').length
  await until(() => splits() >= 10, 30_000, 'some splits to finish')
  const victim = Object.values(await schedulerWorkers(client))[0]
  process.kill(victim.pid, 'SIGKILL')
  // The checksum weighs every value by its new chunk and place: exact only if every chunk is.
  t.is(await pending, expectedChecksum(ref, y))
  t.true(s.lostWorkers >= 1)
  t.is(await client.compute(y.sum()), stats(ref).sum)
})
