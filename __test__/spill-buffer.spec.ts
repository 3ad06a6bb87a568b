import test from 'ava'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { decompress, frameInfo, SpillBuffer, SpillwayError } from 'spillway'
import { scratch } from './helpers'

const MiB = 1 << 20

test('chunks past the target spill LRU-first to 0600 files in a 0700 directory and come back intact', async (t) => {
  const dir = join(scratch(t), 'spill')
  const buf = new SpillBuffer({ dir, memoryLimit: 8 * MiB, target: 0.5, codec: 'zstd' })
  const chunks = new Map<string, Buffer>()
  for (let i = 0; i < 10; i++) {
    const data = Buffer.alloc(MiB, i % 7)
    chunks.set(`chunk-${i}`, data)
    await buf.set(`chunk-${i}`, data)
  }
  const m = buf.metrics()
  t.true(m.memoryBytes <= 4 * MiB, `memory ${m.memoryBytes} within the target`)
  t.is(m.managedBytes, 10 * MiB)
  t.is(m.spilledBytes.memory, m.managedBytes - m.memoryBytes)
  const files = readdirSync(dir)
  t.is(files.length, m.diskCount)
  t.is(files.reduce((s, f) => s + statSync(join(dir, f)).size, 0), m.spilledBytes.disk)
  t.true(m.spilledBytes.disk < m.spilledBytes.memory / 10, 'constant chunks compress')
  t.is(statSync(dir).mode & 0o777, 0o700)
  for (const f of files) t.is(statSync(join(dir, f)).mode & 0o777, 0o600)
  t.false(buf.has('chunk-0') && m.memoryCount === 10, 'the oldest chunk was spilled')
  for (const [k, v] of chunks) t.true((await buf.get(k))?.equals(v), k)
  t.is(await buf.get('missing'), undefined)
  t.true(buf.delete('chunk-3'))
  t.false(buf.has('chunk-3'))
  await buf.close()
  t.throws(() => statSync(dir))
})

test('setTarget spills at once', async (t) => {
  const buf = new SpillBuffer({ dir: join(scratch(t), 's'), memoryLimit: 10 * MiB, target: 0.9 })
  for (let i = 0; i < 8; i++) await buf.set(`k${i}`, new Float64Array(MiB / 8).fill(i))
  t.is(buf.metrics().diskCount, 0)
  await buf.setTarget(0.3)
  t.true(buf.metrics().memoryBytes <= 3 * MiB)
  t.true(buf.metrics().diskCount >= 5)
  await buf.close()
})

test('bad options name the field and what is allowed', (t) => {
  const err = t.throws(() => new SpillBuffer({ dir: '', memoryLimit: -1, target: 2, codec: 'brotli', colour: 1 } as any))
  t.is((err as any).code, 'ERR_SPILLWAY_INVALID_CONFIG')
  for (const f of ['dir', 'memoryLimit', 'target', 'codec', 'colour']) t.regex(err!.message, new RegExp(`${f}:`))
  t.regex(err!.message, /'lz4'/)
})

test("a Buffer from get is the caller's own: writing into it never changes the held chunk", async (t) => {
  const buf = new SpillBuffer({ dir: join(scratch(t), 'own'), memoryLimit: 4 * MiB, target: 0.5, codec: 'none' })
  await buf.set('small', Buffer.alloc(MiB, 1))
  await buf.set('big', Buffer.alloc(3 * MiB, 2)) // larger than the target: straight to disk
  for (const key of ['small', 'big']) {
    const first = (await buf.get(key))!
    const fill = first[0]
    first.fill(9)
    const again = (await buf.get(key))!
    t.is(again[0], fill, `${key} unchanged`)
    t.true(again.every((b) => b === fill), key)
  }
  await buf.close()
})

test('generate and reduce reject mistyped arguments with a code naming the field, before the binding sees them', async (t) => {
  const buf = new SpillBuffer({ dir: join(scratch(t), 'args'), memoryLimit: 4 * MiB })
  t.teardown(() => buf.close())
  const spec = { kind: 'random', seed: 1, chunkId: 0, len: 8 }
  const cases: [unknown, RegExp][] = [
    [{ ...spec, seed: '1' }, /spec\.seed: got "1"; allowed: a non-negative safe integer/],
    [{ ...spec, len: 2.5 }, /spec\.len: got 2\.5/],
    [{ ...spec, kind: 1 }, /spec\.kind: got 1; allowed: 'random' or 'randint'/],
    [{ ...spec, kind: 'randint', low: 0.5, high: 5 }, /spec\.low: got 0\.5; allowed: a safe integer/],
    [null, /spec: got null; allowed: an object/],
  ]
  for (const [bad, message] of cases) {
    const err = await t.throwsAsync(buf.generate('k', bad as any), { instanceOf: SpillwayError })
    t.is(err!.code, 'ERR_SPILLWAY_INVALID_ARGUMENT', message.source)
    t.regex(err!.message, message)
  }
  // A wrong value of a well-typed field is the binding's to reject, under the same code.
  const negative = await t.throwsAsync(buf.generate('k', { ...spec, seed: -1 }), { instanceOf: SpillwayError })
  t.is(negative!.code, 'ERR_SPILLWAY_INVALID_ARGUMENT')
  t.false(buf.has('k'))

  t.is(await buf.generate('k', spec), 64)
  const both = await t.throwsAsync(buf.reduce('k', 1 as any, 2 as any), { instanceOf: SpillwayError })
  t.is(both!.code, 'ERR_SPILLWAY_INVALID_ARGUMENT')
  t.regex(both!.message, /dtype: got 1; allowed: 'float64' or 'int64'[\s\S]*op: got 2; allowed: 'sum'/)
  t.is((await buf.reduce('k', 'float64', 'count'))?.count, 8)
})

test('a Float64Array spills shuffled under auto and under lz4+shuffle, and reads back exactly', async (t) => {
  const field = new Float64Array(200_000)
  for (let i = 0; i < field.length; i++) field[i] = 280 + 15 * Math.sin(i * 1e-3) + ((i * 2654435761) % 1000) * 1e-9
  const bytes = Buffer.from(field.buffer)
  for (const codec of ['auto', 'lz4+shuffle', 'zstd+shuffle']) {
    const buf = new SpillBuffer({ dir: join(scratch(t), codec), memoryLimit: 64 * 1024, target: 0.5, codec })
    t.teardown(() => buf.close())
    await buf.set('field', field) // larger than the target: straight to disk
    await buf.set('bytes', bytes)
    await buf.set('told', bytes, 8)
    const frame = (k: string) => buf.getFrame(k).then((f) => (t.true(f!.compressed), f!.data))
    const spilled = await frame('field')
    const info = frameInfo(spilled)
    t.is(info.codec, codec === 'auto' ? 'lz4+shuffle' : codec)
    t.is(info.elementSize, 8)
    t.true(spilled.length < 0.75 * bytes.length, `${codec}: ${spilled.length} bytes on disk for ${bytes.length}`)
    // Bytes of unknown type: auto tries lz4 alone, which does not shrink this field by the 10% that pays
    // (so it is stored raw); a shuffle codec shuffles them as 8-byte values, Blosc's default.
    t.is(frameInfo(await frame('bytes')).codec, codec === 'auto' ? 'none' : codec)
    t.is(frameInfo(await frame('told')).codec, codec === 'auto' ? 'lz4+shuffle' : codec)
    for (const k of ['field', 'bytes', 'told']) t.true((await buf.get(k))!.equals(bytes), `${codec} ${k}`)
  }
})

test('getFrame sends a spilled chunk as its compressed frame, without bringing it back, and one in memory raw', async (t) => {
  const dir = join(scratch(t), 'frames')
  const buf = new SpillBuffer({ dir, memoryLimit: 64 * 1024, target: 0.5, codec: 'zstd' })
  t.teardown(() => buf.close())
  const spilled = Buffer.alloc(MiB, 7) // larger than the target: straight to disk
  const small = Buffer.from('held in memory')
  await buf.set('spilled', spilled)
  await buf.set('small', small)
  const before = buf.metrics()
  t.is(before.diskCount, 1)

  const out = (await buf.getFrame('spilled'))!
  t.true(out.compressed)
  t.true(out.data.length < spilled.length / 100, `${out.data.length} bytes sent for ${spilled.length}`)
  t.is(frameInfo(out.data).codec, 'zstd')
  t.true((await decompress(out.data)).equals(spilled))
  t.true(out.data.equals(readFileSync(join(dir, readdirSync(dir)[0]!))), 'the spill file verbatim')
  t.deepEqual(buf.metrics(), before, 'no unspill: the chunk stays on disk')

  t.deepEqual(await buf.getFrame('small'), { compressed: false, data: small })
  t.is(await buf.getFrame('missing'), undefined)
})
