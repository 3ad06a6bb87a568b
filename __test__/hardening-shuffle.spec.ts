// The P2P shuffle under a lost owner and a release midway (issue 32, items
// 11 and 12), on real workers through the public entry.
import test from 'ava'
import { join } from 'node:path'
import { bag, random, schedulerWorkers, type Client } from 'spillway'
import { sharedCluster, until } from './cluster-helpers'

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
