// Issue 35, item 3: `{ signal }` on compute, persist, gather, wait, result
// and setupClient. Aborting rejects with the signal's reason (an AbortError
// when it has none), stops the call's runs on the workers and leaves no
// key on the scheduler, no value or shard on a worker, no spill file.
import test from 'ava'
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bag, random, schedulerWorkers, setupClient, wait, type Client } from 'spillway'
import { bytesOnDisk, sharedCluster, until } from './cluster-helpers'

let client!: Client
sharedCluster(test, (c) => (client = c))

const FIX = join(__dirname, 'fixtures', 'tasks', 'abort.mjs')
const blockUntilGo = { module: FIX, name: 'blockUntilGo' } as const
const blockOn = { module: FIX, name: 'blockOn' } as const
const deafItem = { module: FIX, name: 'deafItem' } as const
const never = { module: FIX, name: 'never' } as const
const dirs: string[] = []
test.after.always(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))
function scratch(): string {
  const d = mkdtempSync(join(tmpdir(), 'spillway-abort-'))
  dirs.push(d)
  return d
}
const started = (dir: string) => readdirSync(dir).filter((f) => f.startsWith('started-'))

/** Nothing of the call left: no key on the scheduler, no value, run or shard on a worker, no spill file. */
async function nothingLeft(t: { is(a: unknown, b: unknown, m?: string): void }): Promise<void> {
  await until(() => client.scheduler.tasks.size === 0, 30_000, 'every key let go of')
  await until(async () => Object.values(await schedulerWorkers(client)).every((w) => w.tasks.held + w.tasks.processing === 0 && ((w.metrics as any).shuffle?.heldShards ?? 0) === 0), 30_000, 'workers empty')
  for (const w of Object.values(await schedulerWorkers(client))) {
    t.is(w.tasks.held + w.tasks.processing, 0, `${w.name} holds and runs nothing`)
    t.is((w.metrics as any).shuffle?.heldShards ?? 0, 0, `${w.name} holds no shard`)
  }
  t.is(bytesOnDisk(client.cluster.options.spillDir).files, 0, 'no spill file')
}

const isAbortError = (e: unknown) => e instanceof DOMException && e.name === 'AbortError'
/** What `p` rejects with (ava's throwsAsync fails on a DOMException: not an Error to it). */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p
  } catch (e) {
    return e
  }
  throw new Error('resolved where it should have rejected')
}

test.serial('a signal that is not an AbortSignal is an ArgumentError naming options.signal', async (t) => {
  const f = client.submit((x: number) => x, [1])
  const calls: [string, () => Promise<unknown>][] = [
    ['compute', () => client.compute(bag.fromSequence([1]), { signal: 'soon' as any })],
    ['persist', () => client.persist(bag.fromSequence([1]), { signal: {} as any })],
    ['gather', () => client.gather([f], { signal: 5 as any })],
    ['wait', () => wait([f], { signal: true as any })],
    ['result', () => f.result({ signal: null as any })],
    ['setupClient', () => setupClient({ signal: 'x' } as any)],
  ]
  for (const [what, call] of calls) {
    const e = await t.throwsAsync(call, { code: 'ERR_SPILLWAY_INVALID_ARGUMENT' }, what)
    t.regex(e!.message, /options\.signal/, what)
    t.regex(e!.message, /an AbortSignal/, what)
  }
  f.release()
  await nothingLeft(t)
})

test.serial('an already aborted signal rejects at once with its reason, submitting nothing', async (t) => {
  const before = client.scheduler.tasks.size
  const e = await rejection(client.compute(bag.fromSequence([1, 2]).map((x: number) => x), { signal: AbortSignal.abort() }))
  t.true(isAbortError(e), String(e))
  const why = new Error('not wanted any more')
  t.is(await rejection(client.persist(bag.fromSequence([3]), { signal: AbortSignal.abort(why) })), why)
  t.true(isAbortError(await rejection(client.compute(random.random([1_000], { chunks: 100, seed: 1 }).sum(), { signal: AbortSignal.abort() }))))
  t.true(isAbortError(await rejection(client.compute(bag.fromSequence([1, 2]).take(1), { signal: AbortSignal.abort() }))))
  t.is(client.scheduler.tasks.size, before, 'nothing submitted')
  const setup = await rejection(setupClient({ maxWorkers: 1, dashboard: false, silenceLogs: true, signal: AbortSignal.abort() } as any))
  t.true(isAbortError(setup))
})

test.serial('aborting a compute while its tasks run rejects with the reason and stops the runs on the workers', async (t) => {
  const dir = scratch()
  const ac = new AbortController()
  const p = client.compute(bag.fromSequence([1, 2, 3, 4], { npartitions: 4 }).map(blockUntilGo, dir), { signal: ac.signal })
  await until(() => started(dir).length >= 2, 30_000, 'tasks running')
  ac.abort()
  const e = await rejection(p)
  t.true(isAbortError(e), String(e))
  // The runs saw their task's signal abort: stopped, not left to finish.
  await until(() => started(dir).every((f) => existsSync(join(dir, f.replace('started-', 'stopped-')))), 30_000, 'runs stopped')
  await nothingLeft(t)
})

test.serial('an async step aborted during an item that ignores the signal starts no further item of its partition', async (t) => {
  const dir = scratch()
  const ac = new AbortController()
  const p = client.compute(bag.fromSequence([1, 2, 3], { npartitions: 1 }).map(deafItem, dir, 1500), { signal: ac.signal })
  await until(() => started(dir).length >= 1, 30_000, 'the first item running')
  ac.abort()
  t.true(isAbortError(await rejection(p)))
  await until(() => existsSync(join(dir, 'done-1')), 30_000, 'the first item done')
  await new Promise((r) => setTimeout(r, 500))
  t.deepEqual(started(dir), ['started-1'], 'no item after the abort')
  await nothingLeft(t)
})

test.serial('aborting a take while its partition runs stops it too', async (t) => {
  const dir = scratch()
  const ac = new AbortController()
  const p = client.compute(bag.fromSequence([1, 2, 3], { npartitions: 3 }).map(blockUntilGo, dir).take(2), { signal: ac.signal })
  await until(() => started(dir).length === 1, 30_000, 'the first partition running')
  ac.abort()
  t.true(isAbortError(await rejection(p)))
  await until(() => existsSync(join(dir, 'stopped-1')), 30_000, 'the run stopped')
  await nothingLeft(t)
})

test.serial('a persisted array is let go of when its signal aborts', async (t) => {
  const ac = new AbortController()
  const x = await client.persist(random.random([4_000], { chunks: 1_000, seed: 2 }), { signal: ac.signal })
  await x.wait()
  t.is(client.scheduler.tasks.size, 4)
  ac.abort()
  await nothingLeft(t)
})

test.serial('aborting during a shuffle drops the shards already pushed', async (t) => {
  const dir = scratch()
  const ac = new AbortController()
  const reason = new Error('user pressed stop')
  // Three inputs split and push their shards; the fourth blocks.
  const groups = bag.fromSequence([1, 2, 3, 4, 5, 6, 7, 8], { npartitions: 4 }).map(blockOn, dir, 8).groupBy((x: number) => x % 3, { npartitions: 3 })
  const p = client.compute(groups, { signal: ac.signal })
  let early: unknown
  p.catch((e) => (early = e))
  await until(() => early !== undefined || started(dir).length === 1, 30_000, 'the blocking input running')
  t.is(early, undefined)
  await until(async () => Object.values(await schedulerWorkers(client)).some((w) => ((w.metrics as any).shuffle?.heldShards ?? 0) > 0), 30_000, 'shards pushed')
  ac.abort(reason)
  t.is(await rejection(p), reason)
  await nothingLeft(t)
})

test.serial('aborting after the results arrived changes nothing; a persisted bag is let go of when its signal aborts', async (t) => {
  const ac = new AbortController()
  t.deepEqual(await client.compute(bag.fromSequence([1, 2, 3], { npartitions: 2 }).map((x: number) => x * 2), { signal: ac.signal }), [2, 4, 6])
  ac.abort()
  await nothingLeft(t)
  const kept = new AbortController()
  const persisted = await client.persist(bag.fromSequence([1, 2, 3], { npartitions: 3 }).map((x: number) => x + 1), { signal: kept.signal })
  t.deepEqual(await client.compute(persisted), [2, 3, 4])
  t.true(client.scheduler.tasks.size >= 3, 'held while persisted')
  kept.abort()
  await nothingLeft(t)
})

test.serial('result, gather and wait stop waiting when their signal aborts; the Future stays usable', async (t) => {
  const dir = scratch()
  const f = client.submit(blockUntilGo, [7, dir])
  await until(() => started(dir).length === 1, 30_000, 'the task running')
  const ac = new AbortController()
  const r = f.result({ signal: ac.signal })
  ac.abort()
  t.true(isAbortError(await rejection(r)))
  const why = new Error('gather no more')
  const g = new AbortController()
  const gathered = client.gather([f], { signal: g.signal })
  g.abort(why)
  t.is(await rejection(gathered), why)
  const timedOut = await rejection(wait([f], { signal: AbortSignal.timeout(50) }))
  t.is((timedOut as DOMException).name, 'TimeoutError')
  t.is(f.status, 'pending')
  writeFileSync(join(dir, 'go'), '')
  t.is(await f.result(), 7)
  f.release()
  await nothingLeft(t)
})

test.serial('a compute of tasks that never settle, aborted, frees its workers: their runs get a cancel\'s grace, then the workers restart, and the next compute answers', async (t) => {
  const dir = scratch()
  const ac = new AbortController()
  const p = client.compute(bag.fromSequence([1, 2, 3, 4], { npartitions: 4 }).map(never, dir), { signal: ac.signal })
  await until(() => started(dir).length >= 2, 30_000, 'both workers busy')
  ac.abort()
  t.true(isAbortError(await rejection(p)))
  const t0 = Date.now()
  // A released run would keep its slot for the released-task grace (60 s); an aborted call's is a cancel's (5 s).
  const next = await client.compute(bag.fromSequence([5, 6], { npartitions: 2 }).map((x: number) => x * 2))
  t.deepEqual(next, [10, 12])
  t.true(Date.now() - t0 < 40_000, `the next compute answered after ${Date.now() - t0} ms`)
  await nothingLeft(t)
})

test.serial('aborting setupClient while its cluster starts rejects with the reason and closes what it started', async (t) => {
  const base = scratch()
  const ac = new AbortController()
  const p = setupClient({ maxWorkers: 1, dashboard: false, silenceLogs: true, tempBaseDir: base, signal: ac.signal } as any)
  let early: unknown
  p.then((r) => void r[Symbol.asyncDispose](), (e) => (early = e))
  // Aborted once its spill directory is made, while its workers start.
  await until(() => early !== undefined || readdirSync(base).length > 0, 60_000, 'the spill directory made')
  t.is(early, undefined)
  ac.abort()
  t.true(isAbortError(await rejection(p)))
  // The spill directory goes with the cluster once it is closed.
  await until(() => readdirSync(base).length === 0, 60_000, 'spill directory removed')
  t.deepEqual(readdirSync(base), [])
})
