import test from 'ava'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SpillBuffer, SpillwayError } from 'spillway'

function scratch(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'spillway-frames-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

test('setFrame: a spilled value moves between stores as its frame, onto the spill disk as it is, and reads back exactly', async (t) => {
  const dir = scratch(t)
  const a = new SpillBuffer({ dir: join(dir, 'a'), memoryLimit: 8 << 20, target: 0.5, codec: 'zstd' })
  const b = new SpillBuffer({ dir: join(dir, 'b'), memoryLimit: 8 << 20, target: 0.5, codec: 'lz4' })
  t.teardown(async () => {
    await a.close()
    await b.close()
  })
  const value = Buffer.from('a value that compresses well. '.repeat(200_000).slice(0, 6 << 20))
  await a.set('k', value)
  const sent = (await a.getFrame('k'))!
  t.true(sent.compressed, 'past the target: spilled, so it leaves as its frame')
  t.true(sent.data.length < value.length / 10)
  t.is(await b.setFrame('k', sent.data), value.length)
  const m = b.metrics()
  t.is(m.memoryBytes, 0, 'nothing held in memory for it')
  t.is(m.diskCount, 1)
  t.is(m.spilledBytes.disk, sent.data.length, 'the frame as it came (zstd, though this store writes lz4)')
  t.deepEqual(await b.get('k'), value)

  const bad = Buffer.from(sent.data)
  bad[bad.length - 1] ^= 1
  const err = await t.throwsAsync(b.setFrame('other', bad))
  t.is((err as SpillwayError).code, 'ERR_SPILLWAY_CORRUPT_FRAME')
  t.false(b.has('other'))
})
