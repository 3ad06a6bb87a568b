import test from 'ava'
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { SpillBuffer } from 'spillway'
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
