// maxSpill (Dask's max-spill) through the package's entry, standalone and
// on a real worker; the cap's log line in Dask's words.

import test from 'ava'
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError, schedulerWorkers, SpillBuffer, workerSpillBytes } from 'spillway'
import { MemoryLog, UNMANAGED_EVERY_MS } from '../src/worker/memory-log'
import { bytesOnDisk, cluster } from './cluster-helpers'
import { noise, scratch } from './helpers'

const KIB = 1024
const MIB = 2 ** 20

const diskBytes = (dir: string) => readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0)

test('a standalone SpillBuffer writes no more than maxSpill and keeps the rest in memory, exactly', async (t) => {
  const dir = join(scratch(t), 'capped')
  const cap = 100 * KIB
  const buf = new SpillBuffer({ dir, memoryLimit: MIB, target: 0.1, codec: 'lz4', maxSpill: '100 KiB' })
  t.teardown(() => buf.close())
  t.is(buf.maxSpill, cap)
  for (let i = 0; i < 20; i++) {
    await buf.set(`k${i}`, noise(i, 30 * KIB))
    t.true(diskBytes(dir) <= cap, `disk past the cap after k${i}`)
  }
  const m = buf.metrics()
  t.is(m.diskCount, 3, 'three 30 KiB frames fit under 100 KiB, a fourth does not')
  t.is(m.spilledBytes.disk, diskBytes(dir))
  t.is(m.memoryBytes, 17 * 30 * KIB, 'the rest stays in memory, past the target')
  t.true(m.spillCapReached)
  t.true(m.spillCapRefusals >= 1)
  t.is(m.writeFailures, 0, 'the cap is no write failure')
  t.is(m.spillBackoffSeconds, 0)
  // At the cap, eviction stops: nothing is compressed again only to be refused.
  const refusals = m.spillCapRefusals
  t.is(await buf.evictUntil(0), 0)
  t.is(buf.metrics().spillCapRefusals, refusals)
  for (let i = 0; i < 20; i++) t.true((await buf.get(`k${i}`))!.equals(noise(i, 30 * KIB)), `k${i}`)
  // Deleting values frees their files: the cap is no longer reached.
  for (let i = 0; i < 20; i++) buf.delete(`k${i}`)
  t.false(buf.metrics().spillCapReached)
  t.is(diskBytes(dir), 0)
})

test('maxSpill is checked where the buffer is made', (t) => {
  const dir = join(scratch(t), 'bad')
  for (const bad of [0, -1, 'lots', true, '1.5 parsecs']) {
    const err = t.throws(() => new SpillBuffer({ dir, memoryLimit: MIB, maxSpill: bad as any }), { instanceOf: ConfigError })!
    t.deepEqual(
      err.problems.map((p) => p.field),
      ['maxSpill'],
    )
    t.regex(err.problems[0]!.allowed, /size such as '10 GiB'.*false \(no cap\)/)
  }
  const uncapped = new SpillBuffer({ dir, memoryLimit: MIB, maxSpill: false })
  t.is(uncapped.maxSpill, null)
  return uncapped.close()
})

test('the cap line is in Dask words and rate-limited', (t) => {
  const lines: string[] = []
  const log = new MemoryLog((_, m) => lines.push(m), 2 ** 30)
  log.spillCapReached(4 * MIB, 0)
  log.spillCapReached(4 * MIB, 1)
  log.spillCapReached(4 * MIB, UNMANAGED_EVERY_MS + 1)
  t.deepEqual(lines, [
    'spill disk reached its cap (maxSpill 4.0 MiB): keeping values in memory',
    'spill disk reached its cap (maxSpill 4.0 MiB): keeping values in memory',
  ])
})

test('a worker with maxSpill of a few MiB holds the values past it in memory, reports the cap, and gives every value back exactly', async (t) => {
  // One worker, a target low enough that 40 values of 1 MiB must spill.
  const { client, tempDir } = await cluster(t, { maxWorkers: 1, memoryTarget: 0.01, maxSpill: '4 MiB' })
  const items = Array.from({ length: 40 }, (_, i) => i)
  const futures = items.map((i) => client.submit(noise, [i, MIB]))
  const values = (await client.gather(futures)) as Uint8Array[]
  const [w] = Object.values(await schedulerWorkers(client))
  const m = w!.metrics as any
  t.true(workerSpillBytes(w!.metrics) <= 4 * MIB, `spilled ${workerSpillBytes(w!.metrics)}`)
  t.true(bytesOnDisk(tempDir).bytes <= 4 * MIB, 'the files themselves stay under the cap')
  t.true(m.diskCount >= 1, 'it did spill up to the cap')
  t.true(m.spillCapReached)
  t.true(m.spillCapRefusals >= 1)
  t.is(m.writeFailures, 0)
  t.true(m.managedBytes >= 40 * MIB, 'every value is held')
  for (const i of items) t.true(Buffer.from(values[i]!).equals(noise(i, MIB)), `value ${i}`)
})
