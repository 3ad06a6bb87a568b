// Spilling turned off, as Dask's `target: False` / `spill: False`: in the
// standalone SpillBuffer, in tuning, and on real workers (both off: nothing
// is ever written and the worker pauses at `pause`; only target off: process
// memory past `spill` still spills).

import test from 'ava'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError, decideThresholds, memoryAction, schedulerWorkers, SpillBuffer, type Future } from 'spillway'
import { bytesOnDisk, cluster, until } from './cluster-helpers'
import { noise, scratch } from './helpers'

const MIB = 2 ** 20

test('a SpillBuffer with target false spills only when asked, and setTarget moves between off and a fraction', async (t) => {
  const dir = join(scratch(t), 'off')
  const buf = new SpillBuffer({ dir, memoryLimit: MIB, target: false })
  t.teardown(() => buf.close())
  t.is(buf.target, false)
  for (let i = 0; i < 8; i++) await buf.set(`k${i}`, Buffer.alloc(256 * 1024, i))
  let m = buf.metrics()
  t.is(m.memoryBytes, 2 * MIB, 'twice the limit, and nothing spilled by managed memory')
  t.is(m.targetBytes, undefined)
  t.deepEqual(readdirSync(dir), [])
  t.is(await buf.evictUntil(MIB), 4, 'the caller (a worker past its spill threshold) still can')
  await buf.setTarget(0.25)
  t.is(buf.metrics().memoryBytes, 256 * 1024)
  await buf.setTarget(false)
  t.is(buf.target, false)
  for (let i = 0; i < 8; i++) t.true((await buf.get(`k${i}`))!.equals(Buffer.alloc(256 * 1024, i)))
  m = buf.metrics()
  t.is(m.memoryBytes, 2 * MIB, 'read back, and nothing pushed out again')
  const err = t.throws(() => new SpillBuffer({ dir: join(dir, 'x'), memoryLimit: MIB, target: true as any }), { instanceOf: ConfigError })!
  t.regex(err.problems[0]!.allowed, /fraction in \(0, 1\], or false/)
})

test('memoryAction: target off spills down to spill (Dask\'s target or spill), spill off never spills, pause still applies', (t) => {
  const T = { target: 0.6, spill: 0.7, pause: 0.8, terminate: 0.95 }
  t.deepEqual(memoryAction(750, 1000, { ...T, target: false }, 500), { status: 'running', evictTo: 450 })
  t.deepEqual(memoryAction(750, 1000, { ...T, spill: false }, 500), { status: 'running' })
  t.deepEqual(memoryAction(850, 1000, { ...T, target: false, spill: false }, 500), { status: 'paused' })
})

test('tuning leaves an off threshold off and says so', (t) => {
  const o = { strategy: 'auto' as const, spillThresholdGib: 0.5, tightenBy: 0.05, loosenBy: 0.05 }
  const both = decideThresholds({ target: false, spill: false }, 2, o)
  t.is(both.action, 'none')
  t.deepEqual(both.after, { target: false, spill: false })
  t.regex(both.reason, /tuning cannot move an off threshold/)
  const one = decideThresholds({ target: false, spill: 0.85 }, 2, o)
  t.deepEqual(one.after, { target: false, spill: 0.9 })
  t.regex(one.reason, /target is off \(false\): tuning cannot move an off threshold/)
})

const TEN_MIB = 10 * MIB

// One worker of 1 GiB (2 GiB capped, 1 GiB reserved).
const ONE_GIB_WORKER = { maxWorkers: 1, maxMemGb: 2, reserveMemGb: 1 }

test('with target and spill both off, a worker never writes a spill file and pauses at pause', async (t) => {
  const { client, tempDir } = await cluster(t, { ...ONE_GIB_WORKER, memoryTarget: false, memorySpill: false, memoryPause: 0.3, memoryTerminate: 0.95 })
  const [w0] = Object.values(await schedulerWorkers(client))
  t.deepEqual(w0!.thresholds, { target: false, spill: false, pause: 0.3, terminate: 0.95 })
  // 500 MiB of results against a pause at about 307 MiB.
  const futures: Future<Uint8Array>[] = Array.from({ length: 50 }, (_, i) => client.submit(noise, [i, TEN_MIB]))
  let paused: any
  await until(async () => {
    const [w] = Object.values(await schedulerWorkers(client))
    paused = w!.metrics
    return paused?.status === 'paused'
  }, 60_000, 'the worker to pause')
  t.is(paused.spillCount, 0)
  t.is(paused.spilledBytes.disk, 0)
  // (Its rss in the same heartbeat may already be a little lower: the pause was decided on the reading before.)
  t.true(paused.managedBytes > 0 && paused.memoryBytes === paused.managedBytes, 'everything it holds is in memory')
  t.true(futures.some((f) => f.status === 'pending'), 'a paused worker takes no new tasks')
  t.is(bytesOnDisk(tempDir).files, 0, 'no spill file anywhere')
  // What it holds is all in memory and comes back exactly.
  const done = futures.filter((f) => f.status === 'finished').slice(0, 3)
  for (const f of done) {
    const i = futures.indexOf(f)
    t.true(Buffer.from(await f.result()).equals(noise(i, TEN_MIB)), `value ${i}`)
  }
  for (const f of futures) f.release()
})

test('with only target off, process memory past spill still spills, down to spill', async (t) => {
  const { client, tempDir } = await cluster(t, { ...ONE_GIB_WORKER, memoryTarget: false, memorySpill: 0.3, memoryPause: 0.9, memoryTerminate: 0.95 })
  const futures: Future<Uint8Array>[] = Array.from({ length: 50 }, (_, i) => client.submit(noise, [i, TEN_MIB]))
  const values = await client.gather(futures)
  const [w] = Object.values(await schedulerWorkers(client))
  const m = w!.metrics as any
  t.true(m.spillCount > 0, 'spilled by process memory')
  t.true(bytesOnDisk(tempDir).files > 0)
  t.is(m.targetBytes, undefined, 'the target is off')
  for (let i = 0; i < values.length; i++) t.true(Buffer.from(values[i]!).equals(noise(i, TEN_MIB)), `value ${i}`)
})
