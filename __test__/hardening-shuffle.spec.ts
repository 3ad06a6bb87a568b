// The P2P shuffle under a lost owner and a release midway (issue 32, items
// 11 and 12), on real workers through the public entry.
import test from 'ava'
import { join } from 'node:path'
import { bag, random, schedulerWorkers, workerInMemoryBytes, workerSpillBytes, type Client } from 'spillway'
import { bytesOnDisk, cluster, sharedCluster, until } from './cluster-helpers'

let client!: Client
sharedCluster(test, (c) => (client = c))

const RECHUNK = join(__dirname, 'fixtures', 'tasks', 'rechunk.mjs')

interface SplitSeen {
  runs: number
  workers: Set<string>
}

/**
 * Watches the tasks of `group` while they run: for each, the most runs sent
 * and every worker it was processing on or held by.
 */
function watchTasks(group: RegExp): { seen: Map<string, SplitSeen>; stop(): void } {
  const seen = new Map<string, SplitSeen>()
  const timer = setInterval(() => {
    for (const r of client.scheduler.tasks.values()) {
      if (!group.test(r.group)) continue
      const s = seen.get(r.key) ?? { runs: 0, workers: new Set<string>() }
      s.runs = Math.max(s.runs, r.runs)
      if ((r.state === 'processing' || r.state === 'memory') && r.worker) s.workers.add(r.worker.name)
      seen.set(r.key, s)
    }
  }, 2)
  return { seen, stop: () => clearInterval(timer) }
}

/**
 * Once the first task of `group` is running (a slow step before the splits
 * push anything), stops `victim` (SIGSTOP) for 0.5 s, then kills it:
 * senders that dial it meanwhile wait in the handshake and see the
 * connection close.
 */
async function stallThenKill(group: RegExp, pid: number): Promise<void> {
  await until(() => [...client.scheduler.tasks.values()].some((r) => group.test(r.group) && r.state === 'processing'), 60_000, 'a split to start')
  process.kill(pid, 'SIGSTOP')
  await new Promise((r) => setTimeout(r, 500))
  process.kill(pid, 'SIGKILL')
}

async function workerNamed(name: string) {
  await until(async () => Object.values(await schedulerWorkers(client)).some((w) => w.name === name && w.status === 'running'), 60_000, `${name} to run`)
  return Object.values(await schedulerWorkers(client)).find((w) => w.name === name)!
}

test.serial('a worker stalled (SIGSTOP 0.5 s) then killed during a groupBy’s first pushes: the exact groups', async (t) => {
  for (let round = 0; round < 2; round++) {
    const victim = await workerNamed('worker-0')
    const lost = client.scheduler.lostWorkers
    const recs = Array.from({ length: 2000 }, (_, id) => ({ id, k: `k${id % 37}` }))
    // 2 ms an item: the splits spread over time, so some push while the victim is stopped.
    const slow = bag.fromSequence(recs, { npartitions: 40 }).map((x: { id: number; k: string }) => {
      const end = Date.now() + 2
      while (Date.now() < end);
      return x
    })
    const pending = client.compute(slow.groupBy('k', { npartitions: 8 }))
    await stallThenKill(/^group-by-split$/, victim.pid)
    const got = await pending
    const want = new Map<string, number[]>()
    for (const r of recs) want.set(r.k, [...(want.get(r.k) ?? []), r.id])
    t.is(got.length, want.size)
    for (const [k, items] of got) t.deepEqual(items.map((r) => r.id).sort((a, b) => a - b), want.get(k), `round ${round}, key ${k}`)
    t.true(client.scheduler.lostWorkers > lost)
  }
})

test.serial('a worker stalled then killed during a rechunk’s first pushes: the exact sum, and only the splits it concerns run again', async (t) => {
  const victim = await workerNamed('worker-0')
  const x = random.randint(0, 1000, [400, 500], { chunks: [10, 500], seed: 11 })
  // Old chunk i (rows 10i…) lands whole in new chunk ⌊i/2⌋, owned by worker-(⌊i/2⌋ mod 2): outputs go round the sorted worker names.
  const y = x.mapBlocks({ module: RECHUNK, name: 'slowly' }).rechunk([20, 500])
  const watch = watchTasks(/^(rechunk-split|slowly)$/)
  const pending = client.compute(y.sum())
  await stallThenKill(/^rechunk-split$/, victim.pid)
  let got: number
  try {
    got = await pending
  } finally {
    watch.stop()
  }
  // Afterwards: a reduction first would have connected the workers, and the stall would meet no handshake.
  t.is(got, await client.compute(x.sum()))
  const splits = [...watch.seen].filter(([key]) => key.includes('-split-'))
  t.is(splits.length, 40)
  const onSurvivor = (s: SplitSeen | undefined) => s !== undefined && s.workers.size > 0 && [...s.workers].every((w) => w === 'worker-1')
  const parentOf = (input: number) => [...watch.seen].find(([key]) => key.startsWith('slowly-') && key.endsWith(`-${input}`))?.[1]
  // A split that ran on the survivor, read its old chunk there and sent only to the survivor's outputs has nothing to do with the lost owner.
  const unconcerned = splits.filter(([key, s]) => {
    const input = Number(/-(\d+)$/.exec(key)![1])
    return Math.floor(input / 2) % 2 === 1 && onSurvivor(s) && onSurvivor(parentOf(input))
  })
  t.true(unconcerned.length >= 5, `${unconcerned.length} splits ran only on the survivor for its own outputs`)
  for (const [key, s] of unconcerned) t.is(s.runs, 1, `${key} ran again`)
  const again = splits.filter(([, s]) => s.runs > 1).length
  t.true(again < 40, `${again} of 40 splits ran again`)
})

/** Shards held, managed bytes (memory and disk) and spill files over every worker, from fresh metrics. */
async function held(c: Client, spillDir: string) {
  const ws = Object.values(await schedulerWorkers(c))
  return {
    shards: ws.reduce((a, w) => a + ((w.metrics as { shuffle?: { heldShards: number } }).shuffle?.heldShards ?? 0), 0),
    managed: ws.reduce((a, w) => a + workerInMemoryBytes(w.metrics as never) + workerSpillBytes(w.metrics as never), 0),
    files: bytesOnDisk(spillDir).files,
  }
}

test.serial('a persisted groupBy or rechunk released midway frees every shard on every worker: managed bytes and spill files back to nothing', async (t) => {
  // Low thresholds: the shards spill, so their files must go too.
  const { client: c, tempDir } = await cluster(t, { memoryTarget: 0.005, memorySpill: 0.5, memoryPause: 0.9 })
  t.deepEqual(await held(c, tempDir), { shards: 0, managed: 0, files: 0 })
  // About 80 MB of items, 20 ms a partition of 10: released while the splits still push.
  const items = bag.fromSequence(Array.from({ length: 400 }, (_, i) => i), { npartitions: 40 }).map((i: number) => {
    const end = Date.now() + 2
    while (Date.now() < end);
    return { i, k: i % 50, pad: String(i).padEnd(200_000, String.fromCharCode(97 + (i % 26))) }
  })
  const x = random.random([2000, 2000], { chunks: [50, 2000], seed: 3 }).mapBlocks({ module: RECHUNK, name: 'slowly' })
  for (const persist of [() => c.persist(items.groupBy('k', { npartitions: 8 })), () => c.persist(x.rechunk([2000, 50]))]) {
    const p = await persist()
    await until(async () => (await held(c, tempDir)).files >= 4, 60_000, 'shards to arrive and spill')
    const midway = await held(c, tempDir)
    t.true(midway.managed > 0 && midway.files > 0, JSON.stringify(midway))
    p.release()
    await until(async () => JSON.stringify(await held(c, tempDir)) === JSON.stringify({ shards: 0, managed: 0, files: 0 }), 30_000, 'every shard to go')
    t.deepEqual(await held(c, tempDir), { shards: 0, managed: 0, files: 0 })
    t.is(c.scheduler.tasks.size, 0)
  }
  // The cluster computes on: the same groupBy, persisted again and read whole.
  const again = await c.persist(items.groupBy('k', { npartitions: 8 }))
  t.is((await c.compute(again)).reduce((a, [, list]) => a + list.length, 0), 400)
  again.release()
})
