// A spill disk that fills midway through a shuffle whose input grew, and a
// broadcast join's hot key: each ends in its coded error, naming the worker
// or key and the figures, with no worker killed and nothing left behind.
import test, { type ExecutionContext } from 'ava'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bag, schedulerWorkers, type Client } from 'spillway'
import { ownTaskError } from '../src/base/errors'
import { DataClient } from '../src/comm/data-client'
import { DataServer } from '../src/worker/data-server'
import { FULL_GRACE_MS, untilRoom } from '../src/worker/collections/shuffle/spill-full'
import type { SpillRoom } from '../src/worker/memory-monitor'
import { bytesOnDisk, cluster, GIB, until } from './cluster-helpers'

const MIB = 2 ** 20
/** Two workers of 1 GiB that pause at 30%: a few hundred MiB of shards fill them, as GiBs would at the defaults. */
const LOW = { maxMemGb: 2, reserveMemGb: 0, memoryTarget: 0.15, memorySpill: 0.2, memoryPause: 0.3 }

/** `n` items of `size` incompressible bytes each (xorshift, seeded by `seed`): the spill codec cannot shrink them. */
function noisy(seed: number, n: number, size: number): { k: number; p: Buffer }[] {
  const out: { k: number; p: Buffer }[] = []
  let x = (seed * 2654435761) >>> 0 || 1
  for (let j = 0; j < n; j++) {
    const words = new Uint32Array(size / 4)
    for (let w = 0; w < words.length; w++) {
      x ^= x << 13
      x ^= x >>> 17
      x ^= x << 5
      words[w] = x >>> 0
    }
    out.push({ k: (seed * 31 + j) % 64, p: Buffer.from(words.buffer) })
  }
  return out
}

/** Each worker's highest rss while `work` runs, from the scheduler's view. */
async function peakRss<T>(client: Client, work: Promise<T>): Promise<{ peak: Map<string, number>; settled: PromiseSettledResult<T> }> {
  const peak = new Map<string, number>()
  let sampling = true
  const sampler = (async () => {
    while (sampling) {
      for (const w of Object.values(await schedulerWorkers(client))) peak.set(w.name, Math.max(peak.get(w.name) ?? 0, (w.metrics as any)?.rss ?? 0))
      await new Promise((r) => setTimeout(r, 25))
    }
  })()
  const [settled] = await Promise.allSettled([work])
  sampling = false
  await sampler
  return { peak, settled }
}

/** The shuffle of 720 MiB that grew from 24 numbers, onto the workers of `client`: it must fail with SPILL_FULL and leave nothing. */
async function fillsTheDisk(t: ExecutionContext, client: Client, nannies: { restarts: number }[], tempDir: string): Promise<Error> {
  const workers = Object.values(await schedulerWorkers(client))
  const pids = workers.map((w) => w.pid).sort()
  const grown = bag.fromSequence(Array.from({ length: 24 }, (_, i) => i), { npartitions: 24 }).flatMap(noisy, 30, MIB)
  const { peak, settled } = await peakRss(client, client.compute(grown.groupBy('k', { npartitions: 8 }).map(([k, list]: [number, unknown[]]) => [k, list.length])))
  t.is(settled.status, 'rejected')
  const err = (settled as PromiseRejectedResult).reason
  t.is(err.code, 'ERR_SPILLWAY_SPILL_FULL', String(err))
  t.regex(err.message, /group-by-split\) failed: worker worker-[01] cannot (take|send) shard shuffle-[0-9a-f]{16}-\d+-\d+-\d+ of \d+\.\d MiB: it is at \d+\.\d MiB of its 1\.00 GiB memory limit, past its pause threshold with it, and its spill disk has no room for it \(/)
  t.true(err.message.includes(tempDir), err.message)
  for (const s of ['What to do: give the spill disk more room (a higher maxSpill, tempBaseDir on a bigger filesystem', 'add workers or memory', 'foldBy and frequencies send combined partials', 'The shuffle is dropped']) {
    t.true(err.message.includes(s), `${s} in: ${err.message}`)
  }
  for (const w of workers) t.true((peak.get(w.name) ?? 0) < w.memoryLimit, `${w.name}: peak rss ${((peak.get(w.name) ?? 0) / GIB).toFixed(2)} GiB`)
  t.deepEqual(Object.values(await schedulerWorkers(client)).map((w) => w.pid).sort(), pids, 'the same worker processes')
  t.is(nannies.reduce((a, n) => a + n.restarts, 0), 0, 'no worker restarted')
  // The shuffle is dropped on every worker: its shards and their spill files go.
  await until(async () => Object.values(await schedulerWorkers(client)).every((w) => (w.metrics as any).managedBytes === 0 && (w.metrics as any).shuffle.heldShards === 0), 60_000, 'shards freed')
  t.deepEqual(bytesOnDisk(tempDir), { bytes: 0, files: 0 })
  // The workers take work again.
  t.is(await client.compute(bag.fromSequence([1, 2, 3, 4], { npartitions: 2 }).groupBy((x: number) => x % 2).count()), 2)
  return err
}

test('a shuffle whose input grew past memory and a maxSpill cap fails with ERR_SPILLWAY_SPILL_FULL naming the worker and figures; no worker restarted, nothing left', async (t) => {
  t.timeout(4 * 60_000)
  const { client, cluster: c, tempDir } = await cluster(t, { ...LOW, maxSpill: '32 MiB' })
  const err = await fillsTheDisk(t, client, c.nannies, tempDir)
  t.regex(err.message, /free, \d+\.\d MiB written of its maxSpill of 32\.0 MiB\)/)
})

test('the same shuffle onto a spill disk that fills (a 64 MiB tmpfs) fails the same way, with the free space', async (t) => {
  t.timeout(4 * 60_000)
  const mnt = mkdtempSync(join(tmpdir(), 'spillway-tmpfs-'))
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64m,mode=0700', 'tmpfs', mnt], { encoding: 'utf8' })
  if (r.status !== 0) {
    rmSync(mnt, { recursive: true, force: true })
    t.log(`skipped: cannot mount a tmpfs here (${r.stderr.trim()}); this test needs Linux and root`)
    return t.pass()
  }
  t.teardown(() => {
    spawnSync('umount', [mnt])
    rmSync(mnt, { recursive: true, force: true })
  })
  const { client, cluster: c, tempDir } = await cluster(t, { ...LOW, tempBaseDir: mnt })
  const err = await fillsTheDisk(t, client, c.nannies, tempDir)
  t.regex(err.message, /: \d+(\.\d)? (B|KiB|MiB) free, no maxSpill/)
})

test('a push the receiver refuses with a code comes back to the sender with that code and words, and the next push is taken', async (t) => {
  const secret = Buffer.alloc(32, 7)
  const stored: string[] = []
  const held = {
    forTransfer: async () => undefined,
    receive: async (key: string) => {
      if (key.startsWith('full')) throw ownTaskError('ERR_SPILLWAY_SPILL_FULL', `worker w cannot take shard ${key}`, { bytes: 3 })
      stored.push(key)
    },
  }
  const server = new DataServer(held, secret, { outgoingBytes: 0, outgoingCount: 0, incomingBytes: 0, incomingCount: 0 }, () => {})
  const address = await server.start('tcp://127.0.0.1:0')
  const client = new DataClient(secret)
  t.teardown(() => {
    client.close()
    server.close()
  })
  const err = await t.throwsAsync(client.push(address, 'full-1', Buffer.from('abc')))
  t.is((err as any).code, 'ERR_SPILLWAY_SPILL_FULL')
  t.is(err!.message, 'worker w cannot take shard full-1')
  t.like((err as any).details, { bytes: 3, refused: true, address })
  await client.push(address, 'ok-1', Buffer.from('def'))
  t.deepEqual(stored, ['ok-1'])
})

test('untilRoom: a receiver waits while paused with room, a sender does not; either fails with SPILL_FULL once there is no room for the grace time; a dropped shuffle ends the wait', async (t) => {
  const room: SpillRoom = { bytes: 3 * MIB, freeBytes: 512 * 2 ** 10, maxSpill: null, spilledBytes: 0, spillDir: '/spill/w', rss: 900 * MIB, memoryLimit: GIB }
  let status: 'paused' | 'running' = 'paused'
  let full = false
  const host = { address: 'tcp://127.0.0.1:1', name: 'worker-9', status: () => status, spillRoom: () => (full ? room : undefined) }
  t.true(await untilRoom(host, 'shuffle-a-0-1-0', room.bytes, () => false, 'send'), 'a sender with room goes on while paused')
  const waiting = untilRoom(host, 'shuffle-a-0-1-0', room.bytes, () => false)
  await new Promise((r) => setTimeout(r, 100))
  status = 'running'
  t.true(await waiting, 'a receiver takes the shard once running')
  full = true
  const began = performance.now()
  for (const role of ['take', 'send'] as const) {
    const err = await t.throwsAsync(untilRoom(host, 'shuffle-a-0-1-0', room.bytes, () => false, role))
    t.is((err as any).code, 'ERR_SPILLWAY_SPILL_FULL')
    t.is(
      err!.message.split('. What to do')[0],
      `worker worker-9 cannot ${role} shard shuffle-a-0-1-0 of 3.0 MiB: it is at 900.0 MiB of its 1.00 GiB memory limit, past its pause threshold with it, and its spill disk has no room for it (/spill/w: 512.0 KiB free, no maxSpill)`,
    )
  }
  t.true(performance.now() - began >= 2 * FULL_GRACE_MS)
  let dropped = false
  const ends = untilRoom(host, 'shuffle-a-0-1-0', room.bytes, () => dropped)
  dropped = true
  t.false(await ends, 'a shard of a dropped shuffle is not taken')
})

test('a broadcast join whose hot key makes more pairs than a worker holds fails with ERR_SPILLWAY_TOO_LARGE naming the key and counts; streamed into a count it is exact', async (t) => {
  t.timeout(4 * 60_000)
  const { client, cluster: c } = await cluster(t)
  const side = (n: number, parts: number) => bag.fromSequence(Array.from({ length: n }, (_, i) => ({ k: i % 100 === 0 ? `cold-${i}` : 'hot', i })), { npartitions: parts })
  // 3960 left items of one partition × 2970 small-side items of key "hot": about 800 MiB of pairs on a 1 GiB worker.
  const joined = side(4000, 1).join(side(3000, 1), 'k', 'k', { broadcast: true })
  const err = await t.throwsAsync(client.compute(joined))
  t.is((err as any).code, 'ERR_SPILLWAY_TOO_LARGE', String(err))
  t.regex(err!.message, /join key "hot" is on 3960 left and 2970 right items: 11761200 pairs, about \d+ MiB in memory beyond the items' \d+ (MiB|bytes), more than 60% of a worker's 1024 MiB limit: filter or aggregate one side by that key first/)
  t.is(c.nannies.reduce((a, n) => a + n.restarts, 0), 0, 'no worker lost')
  // A count takes the pairs one by one: none is held, so none is refused.
  t.is(await client.compute(joined.count()), 3960 * 2970 + 30)
  // The same shape a tenth the size, held: every pair, exact.
  const small = (await client.compute(side(400, 2).join(side(300, 1), 'k', 'k', { broadcast: true }))) as [{ i: number }, { i: number }][]
  t.is(small.length, 396 * 297 + 3)
})
