// Hangs that now settle (issue 32, items 13, 14, 16): work no one holds is
// aborted and, when it will not stop, its worker restarted; a task module
// that never finishes loading fails its tasks after a time limit; a task
// that would wait on itself through its sub-tasks fails at once. Limits
// below only turn a hang into a failure.
import test from 'ava'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { bag, schedulerWorkers, SetupConfig, type Client, type SpillwayError } from 'spillway'
import { cycleThrough } from '../src/scheduler/sub-task-cycles'
import { alive, cluster, until } from './cluster-helpers'

const FIX = join(__dirname, 'fixtures', 'tasks', 'hangs.mjs')
const fn = (name: string) => ({ module: FIX, name })
const HANG_MS = 60_000
/** releasedTaskGrace (seconds) for the tests that wait for a restart. */
const GRACE = 2

function bounded<T>(p: Promise<T>, what: string, ms = HANG_MS): Promise<T> {
  let timer: NodeJS.Timeout
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not settle in ${ms / 1000} s`)), ms)))]).finally(() => clearTimeout(timer))
}

function scratch(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'spillway-hangs-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const byName = async (client: Client) => Object.values(await schedulerWorkers(client)).sort((a, b) => a.name.localeCompare(b.name))
const pidIn = async (marker: string) => {
  await until(() => existsSync(marker) && readFileSync(marker, 'utf8') !== '', 30_000, `the task to start (${marker})`)
  return Number(readFileSync(marker, 'utf8'))
}
/** Four quick tasks, restricted to `name` when given; their results (their Futures released). */
async function quick(client: Client, name?: string): Promise<number[]> {
  const fs = Array.from({ length: 4 }, (_, i) => client.submit(fn('double'), [i], { pure: false, ...(name ? { workers: [name] } : {}) }))
  try {
    return (await client.gather(fs)) as number[]
  } finally {
    for (const f of fs) f.release()
  }
}

test('a released Future of a never-ending synchronous task: 4 quick tasks finish elsewhere at once, long before its worker is restarted', async (t) => {
  t.timeout(120_000)
  const { client } = await cluster(t, { threadsPerWorker: 1 })
  const dir = scratch(t)
  const [a] = await byName(client)
  const marker = join(dir, 'spinning')
  const spinning = client.submit(fn('spinForever'), [marker], { workers: [a.name], pure: false })
  const pid = await pidIn(marker)
  spinning.release()
  t.deepEqual(await bounded(quick(client), '4 quick tasks after the release', 40_000), [0, 2, 4, 6])
  t.true(alive(pid), 'the default grace (60 s) has not run out: the blocked worker is still there')
})

test('a Future that never settles, still held, on one worker: an unrelated compute answers, the work sent ahead to that worker taken back for the idle one', async (t) => {
  t.timeout(120_000)
  const { client } = await cluster(t, { threadsPerWorker: 1 })
  const dir = scratch(t)
  const [a] = await byName(client)
  const marker = join(dir, 'never')
  const never = client.submit(fn('neverSettles'), [marker], { workers: [a.name], pure: false })
  const pid = await pidIn(marker)
  const items = Array.from({ length: 12 }, (_, i) => i)
  const got = await bounded(client.compute(bag.fromSequence(items, { npartitions: 12 }).map((x: number) => x + 1)), 'a compute beside a Future that never settles', 40_000)
  t.deepEqual(got, items.map((x) => x + 1))
  t.true(alive(pid), 'taken back, not restarted: its worker still runs the held Future')
  never.release()
})

test('a released Future of a never-ending synchronous task: its worker is restarted after releasedTaskGrace, quick tasks run there, and what it held is recomputed', async (t) => {
  t.timeout(120_000)
  const { client } = await cluster(t, { threadsPerWorker: 1, releasedTaskGrace: GRACE })
  const dir = scratch(t)
  const [a] = await byName(client)
  const held = client.submit(fn('pid'), [], { workers: [a.name], pure: false })
  t.is(await held.result(), a.pid)
  const marker = join(dir, 'spinning')
  const spinning = client.submit(fn('spinForever'), [marker], { workers: [a.name], pure: false })
  const pid = await pidIn(marker)
  spinning.release()
  const doubled = await bounded(quick(client, a.name), '4 quick tasks on the blocked worker')
  t.deepEqual(doubled, [0, 2, 4, 6])
  t.false(alive(pid), 'the blocked worker was restarted')
  const again = (await byName(client)).find((w) => w.name === a.name)!
  t.not(again.pid, pid)
  t.is(await bounded(held.result(), 'the value the restarted worker held'), again.pid, 'made again on the new process')
})

test('a garbage-collected Future of a task that never settles and ignores its signal: its worker is restarted and quick tasks run there', async (t) => {
  t.timeout(120_000)
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  const { client } = await cluster(t, { threadsPerWorker: 1, releasedTaskGrace: GRACE })
  const dir = scratch(t)
  const [a] = await byName(client)
  const marker = join(dir, 'stubborn')
  // No reference to the Future is kept, only its key.
  const key = ((m: string) => client.submit(fn('neverSettles'), [m], { workers: [a.name], pure: false }).key)(marker)
  const pid = await pidIn(marker)
  await bounded(
    (async () => {
      while (client.scheduler.tasks.get(key)?.state === 'processing') {
        gc()
        await sleep(20)
      }
    })(),
    'the Future to be collected',
  )
  t.deepEqual(await bounded(quick(client, a.name), '4 quick tasks on the worker of the collected task'), [0, 2, 4, 6])
  t.false(alive(pid), 'the worker whose task would not stop was restarted')
})

test('a released Future of a task that honours its signal: the signal aborts with ERR_SPILLWAY_CANCELLED and its worker goes on, not restarted', async (t) => {
  t.timeout(120_000)
  const { client } = await cluster(t, { threadsPerWorker: 1, releasedTaskGrace: GRACE })
  const dir = scratch(t)
  const [a] = await byName(client)
  const marker = join(dir, 'waiting')
  const aborted = join(dir, 'aborted')
  const f = client.submit(fn('untilAborted'), [marker, aborted], { workers: [a.name], pure: false })
  const pid = await pidIn(marker)
  f.release()
  await bounded(until(() => existsSync(aborted), HANG_MS, 'the abort'), 'the abort')
  t.is(readFileSync(aborted, 'utf8'), 'ERR_SPILLWAY_CANCELLED')
  t.deepEqual(await bounded(quick(client, a.name), '4 quick tasks after the abort'), [0, 2, 4, 6])
  await sleep(2 * GRACE * 1000)
  t.true(alive(pid), 'a run that stopped does not cost its worker')
  t.is(await client.submit(fn('pid'), [], { workers: [a.name], pure: false }).result(), pid)
})

test('a long synchronous task still held is not stopped for its length: it outlasts releasedTaskGrace and returns from the same worker', async (t) => {
  t.timeout(120_000)
  const { client } = await cluster(t, { threadsPerWorker: 1, releasedTaskGrace: GRACE })
  const dir = scratch(t)
  const [a] = await byName(client)
  const marker = join(dir, 'busy')
  const f = client.submit(fn('busyFor'), [marker, 3 * GRACE * 1000], { workers: [a.name], pure: false })
  const pid = await pidIn(marker)
  t.is(await bounded(f.result(), 'the long task'), pid)
  t.true(alive(pid))
})

test('a released persisted bag whose partition blocks its worker: the partition is stopped by a restart and quick tasks run on that worker', async (t) => {
  t.timeout(120_000)
  const { client } = await cluster(t, { threadsPerWorker: 1, releasedTaskGrace: GRACE })
  const dir = scratch(t)
  const marker = join(dir, 'partition')
  const kept = await client.persist(bag.fromSequence(['spin', 'x', 'y', 'z'], { npartitions: 2 }).map(fn('spinOn'), marker))
  const pid = await pidIn(marker)
  const blocked = (await byName(client)).find((w) => w.pid === pid)!
  t.truthy(blocked, 'the partition runs on a worker of the cluster')
  kept.release()
  t.deepEqual(await bounded(quick(client, blocked.name), '4 quick tasks on the worker of the released partition'), [0, 2, 4, 6])
  t.false(alive(pid), 'the blocked worker was restarted')
  await bounded(until(() => kept.parts.flatMap((p) => p.deps).every((k) => !client.scheduler.tasks.has(k)), HANG_MS, 'every partition let go of'), 'the release')
})

const NEVER = join(__dirname, 'fixtures', 'tasks', 'never-loads.mjs')

test('a task module whose top-level await never settles fails each of its tasks with ERR_SPILLWAY_TIMEOUT naming it and importTimeout; other modules go on working', async (t) => {
  t.timeout(120_000)
  const { client } = await cluster(t, { threadsPerWorker: 1, importTimeout: 10 })
  const [a] = await byName(client)
  const first = client.submit({ module: NEVER, name: 'never' }, [1], { workers: [a.name] })
  const second = client.submit({ module: NEVER, name: 'other' }, [2], { workers: [a.name] })
  // Another module's task on the same one-thread worker runs while that import is still pending.
  const meanwhile = client.submit(fn('double'), [5], { workers: [a.name], pure: false })
  t.is(await bounded(meanwhile.result(), 'a task of another module'), 10)
  t.is(first.status, 'pending')
  for (const f of [first, second]) {
    const e = (await bounded(f.exception(), 'a task of the module that never loads')) as SpillwayError
    t.is(e?.code, 'ERR_SPILLWAY_TIMEOUT')
    t.true(e.message.includes(NEVER), e.message)
    t.regex(e.message, /within 10 s \(importTimeout\)/)
  }
  // Tried again later, it fails again at once: its import is still pending.
  const later = client.submit({ module: NEVER, name: 'never' }, [3], { workers: [a.name], pure: false })
  t.is(((await bounded(later.exception(), 'a later task of that module', 10_000)) as SpillwayError)?.code, 'ERR_SPILLWAY_TIMEOUT')
  t.deepEqual(await bounded(quick(client, a.name), 'quick tasks on that worker'), [0, 2, 4, 6])
  t.true((await byName(client)).some((w) => w.pid === a.pid), 'no worker was restarted for it')
})

test('importTimeout and releasedTaskGrace must be positive numbers of seconds', (t) => {
  for (const field of ['importTimeout', 'releasedTaskGrace']) {
    const e = t.throws(() => new SetupConfig({ [field]: 0 } as any)) as SpillwayError
    t.is(e.code, 'ERR_SPILLWAY_INVALID_CONFIG')
    t.true(e.message.includes(`${field}: got 0; allowed: a positive number of seconds (default 60)`), e.message)
  }
})

test('a task that submits its own key fails with ERR_SPILLWAY_CYCLE naming the key, instead of waiting on itself; nothing is left held', async (t) => {
  t.timeout(120_000)
  const { client, cluster: c } = await cluster(t, { localWorkers: 1, threadsPerWorker: 1 })
  const f = client.submit(fn('submitsItself'), [1])
  const e = (await bounded(f.exception(), 'a task submitting its own key')) as SpillwayError
  t.is(e?.code, 'ERR_SPILLWAY_CYCLE')
  t.true(e.message.includes(`submitted ${JSON.stringify(f.key)}, which is its own key: it would wait on itself for ever`), e.message)
  f.release()
  await bounded(until(() => c.scheduler.tasks.size === 0, HANG_MS, 'every key let go of'), 'the release')
  for (const w of c.scheduler.workers.values()) t.is(c.taskClients.runsOn(w), 0)
})

test('a child that submits under its parent’s key fails with ERR_SPILLWAY_CYCLE naming the chain, and so does the parent; a sub-task under a key of its own runs', async (t) => {
  t.timeout(120_000)
  const { client, cluster: c } = await cluster(t, { localWorkers: 1, threadsPerWorker: 1 })
  const parent = client.submit(fn('parentOfCycle'), [])
  const e = (await bounded(parent.exception(), 'a parent whose child submits under its key')) as SpillwayError
  t.is(e?.code, 'ERR_SPILLWAY_CYCLE')
  t.regex(e.message, new RegExp(`submitted ${JSON.stringify(parent.key)}, which is the key of a task that waits on it through its sub-tasks \\(${JSON.stringify(parent.key)} → "childSubmitting-[0-9a-f-]+"\\)`), e.message)
  const fine = client.submit(fn('parentOfFine'), [])
  t.is(await bounded(fine.result(), 'a sub-task under a fresh key'), 42)
  parent.release()
  fine.release()
  await bounded(until(() => c.scheduler.tasks.size === 0, HANG_MS, 'every key let go of'), 'the release')
  for (const w of c.scheduler.workers.values()) t.is(c.taskClients.runsOn(w), 0)
})

test('cycleThrough: a shortest chain from the submitted key down to its submitter; none in a DAG of shared sub-tasks', (t) => {
  // Who holds each key while running: fib-like sharing (4 and 3 both submit 2), and a chain a → b → c.
  const holders: Record<string, string[]> = { f3: ['f4', 'f5'], f4: ['f5'], f2: ['f3', 'f4'], b: ['a'], c: ['b'], a: [] }
  const up = (k: string) => holders[k] ?? []
  t.is(cycleThrough('f3', 'f1', up), undefined)
  t.is(cycleThrough('f2', 'f0', up), undefined)
  t.deepEqual(cycleThrough('f2', 'f2', up), ['f2'])
  t.deepEqual(cycleThrough('f2', 'f5', up), ['f5', 'f3', 'f2'], 'a shortest chain, the first holder first')
  t.deepEqual(cycleThrough('c', 'a', up), ['a', 'b', 'c'])
  t.is(cycleThrough('a', 'c', up), undefined, 'a parent submitting below itself closes no cycle')
  // A loop among the holders themselves is walked once.
  t.is(cycleThrough('x', 'z', (k) => (k === 'x' ? ['y'] : ['x'])), undefined)
})
