import test from 'ava'
import { availableCodecs, compress, compressSync, decompress, decompressSync, frameInfo, generateChunk, generateChunkSync, reduceChunk, reduceChunkSync, shuffledCodecs } from 'spillway'

test('availableCodecs lists every compiled codec', (t) => {
  t.deepEqual(availableCodecs().sort(), ['lz4', 'none', 'snappy', 'zlib', 'zstd'])
})

test('every codec round-trips compressible and random data through frames', async (t) => {
  const ints = await generateChunk({ kind: 'randint', seed: 1, chunkId: 0, len: 100_000, low: 0, high: 10 })
  const floats = await generateChunk({ kind: 'random', seed: 1, chunkId: 0, len: 50_000 })
  for (const codec of [...availableCodecs(), 'auto']) {
    for (const data of [ints, floats, Buffer.alloc(0), Buffer.from('x')]) {
      const frame = await compress(data, codec)
      t.true((await decompress(frame)).equals(data), codec)
      t.is(frameInfo(frame).decodedLength, data.length)
    }
    if (codec !== 'none') t.true((await compress(ints, codec)).length < ints.length / 2, `${codec} shrinks small ints`)
  }
})

/** float64 samples of a smooth field with a little noise (a stand-in for a climate variable). */
function smoothField(n: number): Float64Array {
  const a = new Float64Array(n)
  for (let i = 0; i < n; i++) a[i] = 280 + 15 * Math.sin(i * 1e-3) + 3 * Math.cos(i * 7.3e-3) + ((i * 2654435761) % 1000) * 1e-9
  return a
}

test('the shuffled codecs round-trip every TypedArray, recording the element size in the frame', async (t) => {
  t.deepEqual(shuffledCodecs(), availableCodecs().filter((c) => c !== 'none').map((c) => `${c}+shuffle`))
  const field = smoothField(40_001)
  const views: ArrayBufferView[] = [
    field,
    new Float32Array(field),
    new Int32Array(field),
    new BigInt64Array(Array.from(field.subarray(0, 5_000), (v) => BigInt(Math.round(v * 1000)))),
    new Int16Array(field),
    new Uint8Array(field.buffer, 3, 1001),
  ]
  for (const codec of shuffledCodecs()) {
    for (const view of views) {
      const bytes = Buffer.from(view.buffer, view.byteOffset, view.byteLength)
      const size = (view as any).BYTES_PER_ELEMENT as number
      for (const frame of [await compress(view, codec), compressSync(view, codec)]) {
        t.true((await decompress(frame)).equals(bytes), `${codec} ${view.constructor.name}`)
        t.true(decompressSync(frame).equals(bytes))
        const info = frameInfo(frame)
        t.is(info.codec, size > 1 ? codec : codec.replace('+shuffle', ''), `${codec} ${view.constructor.name}`)
        t.is(info.elementSize, size)
      }
    }
    // Plain bytes shuffle as 8-byte values, as Blosc's default; or as told.
    const raw = Buffer.from(field.buffer)
    t.is(frameInfo(await compress(raw, codec)).elementSize, 8)
    t.is(frameInfo(await compress(raw, codec, undefined, 4)).elementSize, 4)
    t.true((await decompress(await compress(raw, codec, undefined, 4))).equals(raw))
  }
  const lz4 = (await compress(field, 'lz4')).length
  const shuffled = (await compress(field, 'lz4+shuffle')).length
  t.true(shuffled < 0.8 * lz4, `lz4+shuffle ${shuffled} bytes vs lz4 ${lz4}`)
  t.is(frameInfo(await compress(field, 'lz4')).elementSize, 1, 'no shuffle without asking')
  await t.throwsAsync(() => compress(field, 'lz4+shuffle', undefined, 300), { code: 'ERR_SPILLWAY_INVALID_CONFIG', message: /elementSize/ })
  t.throws(() => compressSync(field, 'none+shuffle'), { code: 'ERR_SPILLWAY_UNKNOWN_CODEC', message: /'lz4\+shuffle'/ })
})

test('zstd levels 1-19 are accepted and others rejected by name', async (t) => {
  const data = Buffer.alloc(10_000, 7)
  for (const level of [1, 10, 19]) t.true((await decompress(await compress(data, "zstd", level))).equals(data))
  await t.throwsAsync(() => compress(data, 'zstd', 22), { code: 'ERR_SPILLWAY_INVALID_LEVEL', message: /1\.\.=19/ })
})

test('an unknown codec is rejected with the list of valid ones', async (t) => {
  const err = await t.throwsAsync(() => compress(Buffer.from('abc'), 'brotli'))
  t.is((err as any).code, 'ERR_SPILLWAY_UNKNOWN_CODEC')
  t.regex(err!.message, /'lz4'.*'zstd'/)
})

test('corrupt, truncated and foreign frames are rejected, never decoded wrongly', async (t) => {
  const data = await generateChunk({ kind: 'randint', seed: 3, chunkId: 1, len: 20_000, low: 0, high: 10 })
  const frame = await compress(data, 'lz4')
  const flipped = Buffer.from(frame)
  flipped[frame.length - 5] ^= 0x40
  await t.throwsAsync(() => decompress(flipped), { code: 'ERR_SPILLWAY_CORRUPT_FRAME' })
  await t.throwsAsync(() => decompress(frame.subarray(0, frame.length - 1)), { code: 'ERR_SPILLWAY_CORRUPT_FRAME' })
  await t.throwsAsync(() => decompress(Buffer.from('not a frame at all, just some text')), { code: 'ERR_SPILLWAY_CORRUPT_FRAME' })
})

test('generateChunk and reduceChunk name each mistyped argument', async (t) => {
  const g = await t.throwsAsync(() => generateChunk({ kind: 'random', seed: 1.5, chunkId: -1, len: 8 } as any), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT' })
  t.regex(g!.message, /spec\.seed/)
  t.regex(g!.message, /spec\.chunkId/)
  const r = await t.throwsAsync(() => reduceChunk(Buffer.alloc(8), 'float64', 42 as any), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT' })
  t.regex(r!.message, /op/)
  t.is((await reduceChunk(new Float64Array([1, 2]), 'float64', 'sum')).sum, 3)
})

test('results reuse the memory of Buffers JS has dropped, never of those it still holds', async (t) => {
  // Large results go back to the native pool when collected; force the
  // collections so that reuse really happens between the calls.
  const { setFlagsFromString } = await import('node:v8')
  const { runInNewContext } = await import('node:vm')
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  const kept: Array<{ data: Buffer; copy: Buffer; frame: Buffer; back: Buffer }> = []
  for (let i = 0; i < 24; i++) {
    const len = 512 * 1024 // 4 MiB: pooled
    const data = await generateChunk(i % 2 ? { kind: 'random', seed: 9, chunkId: i, len } : { kind: 'randint', seed: 9, chunkId: i, len, low: 0, high: 10 })
    const frame = await compress(data, ['lz4', 'zstd', 'snappy', 'none'][i % 4])
    const back = await decompress(frame)
    if (i % 5 === 0) kept.push({ data, copy: Buffer.from(data), frame, back })
    gc()
    await new Promise((r) => setImmediate(r))
  }
  for (const k of kept) {
    t.true(k.data.equals(k.copy), 'a held chunk is unchanged')
    t.true(k.back.equals(k.copy), 'a held result is unchanged')
    t.true((await decompress(k.frame)).equals(k.copy), 'a held frame still decodes')
  }
})

test('the sync variants make and read the same frames and partials, and reject bad input the same way', async (t) => {
  const ints = await generateChunk({ kind: 'randint', seed: 3, chunkId: 0, len: 300_000, low: 0, high: 10 })
  const floats = await generateChunk({ kind: 'random', seed: 3, chunkId: 1, len: 300_000 })
  for (const codec of [...availableCodecs(), 'auto']) {
    for (const data of [ints, floats, Buffer.alloc(0)]) {
      const frame = compressSync(data, codec)
      t.true(frame.equals(await compress(data, codec)), `${codec}: the same frame either way`)
      t.true(decompressSync(frame).equals(data), codec)
      t.true(decompressSync(await compress(data, codec)).equals(data), codec)
    }
  }
  for (const op of ['sum', 'mean', 'min', 'max', 'var', 'std', 'count']) {
    t.deepEqual(reduceChunkSync(floats, 'float64', op), await reduceChunk(floats, 'float64', op), op)
    t.deepEqual(reduceChunkSync(ints, 'int64', op), await reduceChunk(ints, 'int64', op), op)
  }
  t.throws(() => compressSync(ints, 'lz5'), { code: 'ERR_SPILLWAY_UNKNOWN_CODEC', message: /lz5.*'lz4'/ })
  t.throws(() => compressSync(ints, 'zstd', 40), { code: 'ERR_SPILLWAY_INVALID_LEVEL', message: /40/ })
  const bad = Buffer.from(compressSync(ints, 'lz4'))
  bad[bad.length - 5] ^= 0xff
  t.throws(() => decompressSync(bad), { code: 'ERR_SPILLWAY_CORRUPT_FRAME' })
  t.true(generateChunkSync({ kind: 'randint', seed: 3, chunkId: 0, len: 300_000, low: 0, high: 10 }).equals(ints), 'the same chunk either way')
  t.true(generateChunkSync({ kind: 'random', seed: 3, chunkId: 1, len: 300_000 }).equals(floats))
  t.throws(() => generateChunkSync({ kind: 'random', seed: -1, chunkId: 0, len: 8 }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /seed/ })
  t.throws(() => reduceChunkSync(ints, 'float32', 'sum'), { message: /float32/ })
  t.throws(() => reduceChunkSync(ints, 'int64', 'median' as never), { message: /median/ })
})
