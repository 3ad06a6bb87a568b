// Shards batched per destination (collections/shuffle/batches.ts): the
// sender's grouping and cap, the receiver's check of a batch before any of
// it is kept, and a receiver killed while batches are in flight.
import test from 'ava'
import { BATCH_BYTES, parseBatch } from '../src/worker/collections/shuffle/batches'
import { ShuffleService, type ShuffleHost } from '../src/worker/collections/shuffle/service'
import { shardKey } from '../src/wire/bag'
import { SpillwayError } from '../src/base/errors'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bag, Client, LocalCluster, schedulerWorkers } from 'spillway'
import { bytesOnDisk, until } from './cluster-helpers'

function sender(cap: number, fail?: string) {
  const sent: { owner: string; shards: [string, number][]; bytes: number }[] = []
  let inFlight = 0
  let peak = 0
  const client = {
    async pushBatch(owner: string, shards: [string, number][], data: Buffer[]) {
      const bytes = data.reduce((a, d) => a + d.length, 0)
      inFlight += bytes
      peak = Math.max(peak, inFlight)
      await new Promise((r) => setTimeout(r, 1))
      inFlight -= bytes
      if (owner === fail) throw new SpillwayError('ERR_SPILLWAY_TRANSFER', `transfer from ${owner} failed: gone`, { address: owner })
      sent.push({ owner, shards, bytes })
    },
  }
  const host = { store: undefined, client, memoryLimit: 2 ** 30, address: 'me', status: () => 'running', checkSoon() {} } as unknown as ShuffleHost
  return { service: new ShuffleService(host, cap), sent, peak: () => peak }
}

test('an input’s shards go as one message per owning worker, not one per output, under the outgoing cap', async (t) => {
  const { service, sent, peak } = sender(64 * 2 ** 20)
  const owners = Array.from({ length: 40 }, (_, p) => `w${p % 3}`)
  const byOutput = Array.from({ length: 40 }, (_, p) => [p, [Buffer.alloc(1000 + p, p)]] as [number, Buffer[]])
  const marker = await service.sendParts('split-7', 'ab'.repeat(8), 7, 0, 40, byOutput, owners)
  t.is(sent.length, 3, 'one message for each of the 3 owners')
  t.deepEqual(sent.map((s) => s.owner).sort(), ['w0', 'w1', 'w2'])
  for (const s of sent) for (const [key] of s.shards) t.is(owners[Number(key.split('-')[2])], s.owner, `${key} went to its owner`)
  t.is(sent.reduce((a, s) => a + s.shards.length, 0), 40)
  t.deepEqual(marker.parts, new Array(40).fill(1))
  t.true(peak() <= 64 * 2 ** 20)
})

test('many MiB to one owner go in batches of a few MiB, never more than the cap in flight or waiting', async (t) => {
  const cap = 3 * BATCH_BYTES
  const { service, sent, peak } = sender(cap)
  const byOutput = Array.from({ length: 8 }, (_, p) => [p, Array.from({ length: 4 }, () => Buffer.alloc(2 ** 20))] as [number, Buffer[]])
  await service.sendParts('split-0', 'cd'.repeat(8), 0, 0, 8, byOutput, new Array(8).fill('w1'))
  t.is(sent.reduce((a, s) => a + s.bytes, 0), 32 * 2 ** 20)
  t.true(sent.length >= 8 && sent.length <= 9, `${sent.length} messages of about ${BATCH_BYTES} bytes`)
  for (const s of sent) t.true(s.bytes <= BATCH_BYTES)
  t.true(peak() <= cap, `peak in flight ${peak()} within the cap ${cap}`)
})

test('a batch to a lost owner fails the input as a missing dependency naming that peer', async (t) => {
  const { service } = sender(64 * 2 ** 20, 'w1')
  const byOutput = Array.from({ length: 4 }, (_, p) => [p, [Buffer.alloc(10)]] as [number, Buffer[]])
  const e = await t.throwsAsync(service.sendParts('split-0', 'ef'.repeat(8), 0, 0, 4, byOutput, ['w0', 'w1', 'w0', 'w1']))
  t.is((e as any).code, 'ERR_SPILLWAY_MISSING_DEP')
  t.is((e as any).details.peer, 'w1')
})

test('a peer’s batch is checked whole before any shard of it is kept', (t) => {
  const a = shardKey('0123456789abcdef', 3, 1, 0)
  const b = shardKey('0123456789abcdef', 5, 1, 0)
  const payload = Buffer.from('xxxyyyyy')
  t.deepEqual(parseBatch([[a, 3], [b, 5]], payload).map(([k, d]) => [k, d.toString()]), [[a, 'xxx'], [b, 'yyyyy']])
  const bad = (shards: unknown, why: RegExp) => {
    const e = t.throws(() => parseBatch(shards, payload))
    t.is((e as any).code, 'ERR_SPILLWAY_PROTOCOL')
    t.regex(e!.message, why)
  }
  bad({}, /not a list/)
  bad([[a, 3], ['secret-key', 5]], /"secret-key", which is not a shuffle shard/)
  bad([[a, 3], [b, 6]], /length of 6, past its 8 bytes/)
  bad([[a, 3], [b, 4]], /lists 7 bytes of shards in a payload of 8/)
  bad([[a, -1]], /length of -1/)
  bad([[a, 1.5]], /length of 1.5/)
  bad([a], /not a \[key, length\] pair/)
})

test('a worker SIGKILLed while splits send it batches of shards: the exact groups, and no spill file left', async (t) => {
  t.timeout(300_000)
  const spillDir = mkdtempSync(join(tmpdir(), 'spillway-batch-kill-'))
  const lc = await LocalCluster.start({ nWorkers: 2, threadsPerWorker: 1, memoryLimit: 2 ** 30, thresholds: { target: 0.6, spill: 0.7, pause: 0.85, terminate: 0.95 }, spillDir })
  const client = new Client(lc, { silenceLogs: true })
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    await client.close()
    await lc.close()
  }
  t.teardown(async () => {
    await close()
    rmSync(spillDir, { recursive: true, force: true })
  })
  const workers = Object.values(await schedulerWorkers(client))
  const victim = workers.find((w) => w.name === 'worker-0')!
  // 24 splits of 6 MB each, 100 ms apart: each sends its owners several batches, and later splits still send after the kill.
  const items = bag.fromSequence(Array.from({ length: 24 }, (_, i) => i), { npartitions: 24 }).flatMap((i: number) => {
    const end = Date.now() + 100
    while (Date.now() < end);
    return Array.from({ length: 300 }, (_, j) => ({ k: `k${(i * 300 + j) % 53}`, i, j, p: String.fromCharCode(97 + ((i + j) % 26)).repeat(20_000) }))
  })
  const sums = items.groupBy('k', { npartitions: 8 }).map(([k, list]: [string, { i: number; j: number; p: string }[]]) => [k, list.length, list.reduce((a, x) => a + x.i * 1000 + x.j + x.p.charCodeAt(0), 0)])
  const pending = client.compute(sums)
  await until(async () => Object.values(await schedulerWorkers(client)).some((w) => ((w.metrics as any).shuffle?.receivedBytes ?? 0) > 8 * 2 ** 20), 120_000, 'batches to arrive')
  process.kill(victim.pid, 'SIGKILL')
  const got = (await pending) as [string, number, number][]
  const want = new Map<string, [number, number]>()
  for (let i = 0; i < 24; i++) {
    for (let j = 0; j < 300; j++) {
      const k = `k${(i * 300 + j) % 53}`
      const e = want.get(k) ?? [0, 0]
      want.set(k, [e[0] + 1, e[1] + i * 1000 + j + 97 + ((i + j) % 26)])
    }
  }
  t.is(got.length, want.size)
  for (const [k, n, sum] of got) t.deepEqual([n, sum], want.get(k), k)
  t.true(client.scheduler.lostWorkers >= 1, 'the victim was lost')
  await close()
  t.is(bytesOnDisk(spillDir).files, 0, 'no spill file left')
})
